"""`gguf-launcher get REPO`: download a GGUF model from the Hub into the app's model folder, verified against the
SHA-256 the Hub publishes, then check it as `doctor` does. Prints the downloaded path (the file to open; shard 1 of a
split model) on stdout; progress and sentences go to stderr.

Without --file or --quant: the repository's only model, else its best fit for this computer (read from the headers, a
few MB). Ctrl+C pauses: the partial file is kept and the same command continues it. A token for gated or private
repositories is read from the HF_TOKEN environment variable (for ModelScope: MODELSCOPE_API_TOKEN). Exit 0 when the
model is ready, 1 on an error or a failed check, 2 for usage errors, 130 when paused.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from app.cli._engine import add_backend_argument, chosen_backend
from app.cli._output import print_check, print_json, report_user_error
from app.cli.search import add_hub_arguments, hub_access, token_hint
from app.core.problem import Status, UserError
from app.core.text import T, human_bytes
from app.core.text_safety import inert

PAUSED_EXIT = 130


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("get", help="download a GGUF model from the Hub, verified, into the model folder",
                                   description=__doc__)
    parser.add_argument("repo", help="the repository, e.g. bartowski/Qwen2.5-7B-Instruct-GGUF")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--file", metavar="NAME", help="the file to download (a split model: any of its shards)")
    which.add_argument("--quant", metavar="Q", help="the quantization to download, e.g. Q4_K_M")
    add_hub_arguments(parser, "where from")
    parser.add_argument("--folder", metavar="DIR", help="download into this folder instead of the app's model folder")
    add_backend_argument(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    return parser


def _say(text) -> None:
    sys.stderr.write(f"{text}\n")
    sys.stderr.flush()


def _choose(listing, args, access):
    """The model the arguments name, or the only / best-fitting one; UserError listing the choices otherwise."""
    from app.core.hub.errors import HubError

    models = list(listing.models)
    if args.file:
        wanted = args.file.strip().lower()
        found = [m for m in models if m.name.lower() == wanted or any(
            p.path.lower() == wanted or p.path.rsplit("/", 1)[-1].lower() == wanted for p in m.parts)]
    elif args.quant:
        found = [m for m in models if (m.quant or "").lower() == args.quant.strip().lower()]
    else:
        found = models if len(models) == 1 else _best_fit(listing, args, access)
    if len(found) > 1:  # the same quantization whole and split: the single file
        found = sorted(found, key=lambda m: (m.is_split, m.name))[:1]
    if found:
        return found[0]
    names = ", ".join(m.name for m in models) or str(T("none", "无"))
    asked = args.file or args.quant
    message = (T("No GGUF model in {repo} matches “{asked}”; it has: {names}.",
                 "{repo} 中没有与“{asked}”匹配的 GGUF 模型；它有：{names}。", repo=listing.repo, asked=asked,
                 names=names) if asked else
               T("No model in {repo} fits this computer with a useful context; it has: {names}.",
                 "{repo} 中没有能以可用上下文在本机运行的模型；它有：{names}。", repo=listing.repo, names=names))
    raise HubError(message, T("Choose one with --file NAME or --quant Q.", "请用 --file NAME 或 --quant Q 选择一个。"))


def _best_fit(listing, args, access) -> list:
    from app.core.hardware.scan import scan_hardware
    from app.core.hub.remote import fit_listing

    fits = fit_listing(listing, access, scan_hardware(), chosen_backend(args, quiet=True))
    best = next((f.name for f in fits if f.best), None)
    if best is not None:
        _say(T("Chose {name}, the best fit for this computer.", "已选择 {name}：最适合这台电脑。", name=best))
    return [m for m in listing.models if m.name == best]


class _Pause:
    """Ctrl+C (or SIGTERM) asks the download to pause between chunks; a second one stops at once."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self._previous: dict = {}

    def __enter__(self) -> _Pause:
        if threading.current_thread() is threading.main_thread():
            self._previous = {sig: signal.signal(sig, self._handle) for sig in (signal.SIGINT, signal.SIGTERM)}
        return self

    def __exit__(self, *exc) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _handle(self, signum, frame) -> None:
        if self.asked.is_set():
            raise KeyboardInterrupt
        self.asked.set()

    def __call__(self):
        from app.core.hub.download_progress import StopReason

        return StopReason.PAUSE if self.asked.is_set() else None


class _Progress:
    """One line on a terminal's stderr, redrawn; nothing when stderr is not a terminal."""

    def __init__(self) -> None:
        self.shown = sys.stderr.isatty()
        self._width = 0

    def __call__(self, progress) -> None:
        if not self.shown:
            return
        line = str(progress.sentence())
        sys.stderr.write("\r" + line + " " * max(0, self._width - len(line)))
        sys.stderr.flush()
        self._width = len(line)

    def end(self) -> None:
        if self.shown and self._width:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self._width = 0


def _found_elsewhere(model) -> list[Path]:
    """GGUF files of the same size in the places "On this computer" looks (other apps' model folders)."""
    if model.is_split or model.size is None:
        return []
    from app.core.library.scan import find_local_models

    return [Path(m.path) for m in find_local_models(check=False) if m.size == model.size]


def _download(model, access, folder: Path | None, elsewhere: list[Path]):
    from app.core.hub.download import DownloadStats, download_model

    stats = DownloadStats()
    progress = _Progress()
    with _Pause() as pause:
        try:
            path = download_model(model, access, folder=folder, on_progress=progress, should_stop=pause,
                                  on_notice=_say, stats=stats, elsewhere=elsewhere)
        finally:
            progress.end()
    return path, stats


def _checks(path: Path, args):
    """The doctor's checks on the downloaded file (its SHA-256 already in the app's hash cache)."""
    from app.core.gguf.quant_types import embedded_supported_types, supported_types_for_build
    from app.core.gguf.validate import validate
    from app.core.launch.config import BACKEND_EMBEDDED, BACKEND_LLAMA_SERVER, LaunchConfig

    backend = chosen_backend(args, quiet=args.json)
    supported: set[int] | None = None
    if backend == BACKEND_EMBEDDED:
        supported = embedded_supported_types()
    else:
        try:
            from app.core.launch.backends import resolve_backend

            found = resolve_backend(LaunchConfig(model=str(path), backend=BACKEND_LLAMA_SERVER))
            supported = supported_types_for_build(found.build_number)
        except UserError as error:
            _say(T("note: {message}", "注意：{message}", message=error.message.render()))
    return validate(path, supported_types=supported, compute_sha256=True)


def _paused(stopped, folder: Path, args) -> int:
    kept = T("Paused: {done} of {total} is kept in {folder}. Run the same command again to continue.",
             "已暂停：已下载的 {done}（共 {total}）保存在 {folder}。再次运行同一命令即可继续。",
             done=human_bytes(stopped.done_bytes), total=human_bytes(stopped.total_bytes), folder=str(folder))
    _say(kept)
    if args.json:
        print_json({"status": "paused", "done_bytes": stopped.done_bytes, "total_bytes": stopped.total_bytes,
                    "folder": str(folder), "message": kept.render()})
    return PAUSED_EXIT


def run(args) -> int:
    from app.core.hub.client import list_files

    access = hub_access(args)
    folder = Path(args.folder).expanduser() if args.folder else None
    try:
        listing = list_files(args.repo.strip(), access)
        model = _choose(listing, args, access)
    except UserError as error:
        return _failed(error, args)
    return _get(model, access, folder, args)


def _get(model, access, folder: Path | None, args) -> int:
    from app.core.hub.download import DownloadStopped, already_have, model_dir

    try:
        elsewhere = _found_elsewhere(model)
        have = already_have(model, folder, elsewhere)
        had = have is not None
        _say(T("Download not needed: {path} is this file (same SHA-256).",
               "无需下载：{path} 就是这个文件（SHA-256 相同）。", path=str(have)) if had else
             T("Downloading {name} ({size}) from {repo}.", "正在从 {repo} 下载 {name}（{size}）。", name=model.name,
               size=human_bytes(model.size), repo=model.repo))
        path, stats = _download(model, access, folder, elsewhere)
    except DownloadStopped as stopped:
        return _paused(stopped, model_dir(model, folder), args)
    except UserError as error:
        return _failed(error, args)
    report = _checks(path, args)
    report.checks = [_hash_check(model, access) if c.id == "sha256" else c for c in report.checks]
    return _finish(path, model, stats, report, had, args)


def _hash_check(model, access):
    """The SHA-256 row: what the download compared (validate would credit the user with the expected value)."""
    from app.core.hub.download import unverified_notice
    from app.core.hub.errors import where_text
    from app.core.problem import Check

    notice = unverified_notice(model)
    if notice is not None:
        return Check("sha256", Status.WARNING, notice)
    where = where_text(access)
    digests = [p.sha256.lower() for p in model.parts if p.sha256]
    return Check("sha256", Status.OK, T("SHA-256 matches the value {where} publishes{parts}.",
                                        "SHA-256 与 {where_zh} 公布的值一致{parts_zh}。", where=where.render("en"),
                                        where_zh=where.render("zh"),
                                        parts=f" (all {len(digests)} parts)" if len(digests) > 1 else "",
                                        parts_zh=f"（全部 {len(digests)} 个分卷）" if len(digests) > 1 else ""),
                 evidence=tuple(digests))


def _failed(error: UserError, args) -> int:
    code = report_user_error(error, args.json)
    if getattr(error, "kind", None) == "gated":
        _say(token_hint(args.source))
    return code


def _verdict(report) -> Any:
    if report.has_errors:
        return T("The file was downloaded and verified, but a check above failed.",
                 "文件已下载并通过校验，但上面有检查未通过。")
    if report.status is Status.OK:
        return T("Ready to open: every check passed.", "可以打开了：所有检查都通过。")
    return T("Ready to open, with the warnings above.", "可以打开了，但请留意上面的警告。")


def _finish(path: Path, model, stats, report, had: bool, args) -> int:
    if args.json:
        print_json(_json(path, model, stats, report, had))
    else:
        with _to_stderr():
            for check in report.checks:
                if check.status is not Status.OK or check.id == "sha256":
                    print_check(check)
        _say(_verdict(report))
        print(inert(str(path)))
    return 1 if report.has_errors else 0


class _to_stderr:
    """print() into stderr for a moment (the check lines), so stdout carries only the path."""

    def __enter__(self) -> None:
        self._stdout = sys.stdout
        sys.stdout = sys.stderr

    def __exit__(self, *exc) -> None:
        sys.stdout = self._stdout


def _json(path: Path, model, stats, report, had: bool) -> dict[str, Any]:
    return {"path": str(path), "repo": model.repo, "name": model.name, "quant": model.quant, "size": model.size,
            "parts": [p.to_dict() for p in model.parts],
            "verified": all(p.sha256 for p in model.parts), "already_had": had,
            "received_bytes": stats.received_bytes, "reread_bytes": stats.reread_bytes,
            "status": report.status.value, "checks": [c.to_dict() for c in report.checks]}
