"""`gguf-launcher gpu-engine`: get llama.cpp's official GPU build for this NVIDIA card (the app's release, b11434),
checked on the card before it is offered; list or remove the ones it got.

  plan    which build fits the card and driver, and why; what would be downloaded and the SHA-256 each archive is
          checked against (the one the app holds, else the one GitHub publishes in the release's listing, read here)
  get     download it (verified against those SHA-256 before anything is unpacked), unpack it into the app's data
          folder, check that it lists the card and generates on it, then keep it; prints its llama-server's path
  list    the builds kept
  remove  delete a kept build (--build) or all of them

Requests go through the proxy saved in Settings, else the system's (HTTP(S)_PROXY). Ctrl+C during `get` pauses: the
partial download is kept and the same command continues it. Exit 0 on success, 1 on an error or a refused build, 2
for usage errors, 130 when paused.
"""

from __future__ import annotations

import argparse
import sys

from app.cli._output import print_json, report_user_error
from app.core.problem import UserError
from app.core.text import T
from app.core.text_safety import inert

BUILDS = ("cuda-13", "cuda-12", "vulkan")


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("gpu-engine", help="get llama.cpp's GPU build for this NVIDIA card, checked on it",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("plan", "get", "list", "remove"), help="what to do")
    parser.add_argument("--build", choices=BUILDS, help="this build instead of the one that fits best")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    return parser


def _say(text) -> None:
    sys.stderr.write(f"{text}\n")
    sys.stderr.flush()


def _card():
    """The first NVIDIA card as NVML reads it; UserError when there is none."""
    from app.core.hardware.gpu import nvidia_gpus
    from app.core.launch.cuda_facts import CardFacts

    gpus, why = nvidia_gpus()
    if not gpus:
        # NVML's own sentence (no driver, no permission, ...) is the next step: it says what to do about the card
        raise UserError(T("No NVIDIA graphics card can be used on this computer, so there is no GPU build to get.",
                          "这台电脑上没有可用的 NVIDIA 显卡，因此没有可获取的显卡版本。"),
                        why or T("Install the NVIDIA driver if the computer has such a card, or use the built-in "
                                 "engine.", "如果电脑有 NVIDIA 显卡，请安装 NVIDIA 驱动；否则请使用内置引擎。"))
    gpu = gpus[0]
    return CardFacts(gpu.name, gpu.compute_capability, gpu.driver_version, gpu.cuda_driver_version)


def _wanted(args):
    from app.core.launch.release_builds import BuildKind

    return BuildKind(args.build) if args.build else None


def _proxy() -> str | None:
    """The proxy saved in Settings (None: the system's), as the Hub commands use it."""
    from app.cli._settings import load_settings_saying_why

    return load_settings_saying_why().get("hub_proxy") or None


def _archives_json(plan) -> dict:
    """Each archive's expected SHA-256 and size and whose they are ("app": release_pins.py, "github": the release's
    listing), and the sentence that says it."""
    sources = {check.source.value for check in plan.archives}
    return {"archives": [check.to_dict() for check in plan.archives],
            "digest_source": sources.pop() if len(sources) == 1 else ("mixed" if sources else None),
            "checked_against": plan.checked_against.render() if plan.checked_against is not None else None}


def run(args: argparse.Namespace) -> int:
    try:
        if args.action == "list":
            return _list(args)
        if args.action == "remove":
            return _remove(args)
        card = _card()
        if args.action == "plan":
            return _plan(card, args)
        return _get(card, args)
    except UserError as error:
        return report_user_error(error, args.json)


def _plan(card, args) -> int:
    from app.core.hub.engine_fetch import plan_fetch

    plan = plan_fetch(card, build=_wanted(args), proxy=_proxy())
    if args.json:
        print_json({"card": card.name, "build": plan.build.kind.value if plan.build else None,
                    "label": plan.build.label if plan.build else None, "reason": plan.reason.render(),
                    "urls": list(plan.urls), "total_bytes": plan.total_bytes, **_archives_json(plan),
                    "evidence": list(plan.evidence),
                    "refusal": None if plan.refusal is None else {
                        "kind": plan.refusal.kind.value, "message": plan.refusal.message.render(),
                        "fix": plan.refusal.next_step.render() if plan.refusal.next_step else None}})
    else:
        print(plan.reason)
        for url in plan.urls:
            print(f"  {inert(url)}")
        if plan.checked_against is not None:
            print(plan.checked_against)
        if plan.refusal is not None:
            print(f"{T('error', '错误')}: {plan.refusal.message}", file=sys.stderr)
            if plan.refusal.next_step is not None:
                print(f"{T('next step', '下一步')}: {plan.refusal.next_step}", file=sys.stderr)
    return 0 if plan.refusal is None else 1


def _get(card, args) -> int:
    from app.cli.get import PAUSED_EXIT, _Pause
    from app.core.hub.download_progress import DownloadStopped
    from app.core.hub.engine_fetch import FetchProgress, Phase, get_gpu_engine, plan_fetch

    proxy = _proxy()
    plan = plan_fetch(card, build=_wanted(args), proxy=proxy)
    if plan.refusal is not None:
        raise plan.refusal
    _say(plan.reason)
    if plan.checked_against is not None:
        _say(plan.checked_against)
    shown: dict[str, Phase | None] = {"phase": None}

    def progress(step: FetchProgress) -> None:
        if step.phase is Phase.DOWNLOAD and step.download is not None:
            if sys.stderr.isatty():
                sys.stderr.write("\r" + str(step.sentence) + "   ")
                sys.stderr.flush()
        elif step.phase is not shown["phase"]:
            _say(step.sentence if not sys.stderr.isatty() else f"\n{step.sentence}")
        shown["phase"] = step.phase

    with _Pause() as pause:
        try:
            engine = get_gpu_engine(card, build=_wanted(args), on_progress=progress, should_stop=pause, proxy=proxy,
                                    plan=plan)
        except DownloadStopped:
            _say(T("Paused: the part downloaded so far is kept; run the same command to continue.",
                   "已暂停：已下载的部分已保留；再次运行同一命令即可继续。"))
            return PAUSED_EXIT
    if args.json:
        print_json({"engine": engine.to_dict(), **_archives_json(plan)})
    else:
        print(engine.launcher)
    return 0


def _list(args) -> int:
    from app.core.launch.fetched_engines import registered_engines

    engines = registered_engines()
    if args.json:
        print_json({"engines": [engine.to_dict() for engine in engines]})
    elif not engines:
        print(T("No GPU build of llama.cpp has been downloaded.", "还没有下载过 llama.cpp 的显卡版本。"))
    else:
        for engine in engines:
            print(f"{engine.kind}\t{engine.label}\t{engine.tag}\t{inert(engine.device)}\t{inert(engine.launcher)}")
    return 0


def _remove(args) -> int:
    from app.core.launch.fetched_engines import remove_engine

    removed = remove_engine(args.build)
    if args.json:
        print_json({"removed": [engine.to_dict() for engine in removed]})
    elif not removed:
        print(T("No downloaded GPU build of llama.cpp to remove.", "没有可删除的已下载 llama.cpp 显卡版本。"))
    else:
        for engine in removed:
            print(T("Removed the {label} build ({folder}).", "已删除 {label} 版本（{folder}）。", label=engine.label,
                    folder=inert(engine.folder)))
    return 0
