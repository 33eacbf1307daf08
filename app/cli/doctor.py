"""`gguf-launcher doctor MODEL`: the machine, then every check on the model file.

Exit 0 when no check is an error, 1 when one is, 2 for usage errors (argparse).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import Any

from app.cli._engine import chosen_backend
from app.cli._output import print_check, print_json, report_user_error
from app.core.gguf.check_order import failed_summary, failures_first
from app.core.gguf.quant_types import embedded_build, embedded_supported_types, supported_types_for_build
from app.core.gguf.validate import validate
from app.core.launch.config import BACKEND_EMBEDDED, BACKEND_LLAMA_SERVER, LaunchConfig
from app.core.launch.gpu_engine import CHECK_ID as GPU_CHECK_ID
from app.core.launch.gpu_engine import engine_gpu_warning
from app.core.plan.projector import found_projector
from app.core.problem import Check, Status, UserError
from app.core.text import T, human_bytes
from app.core.text_safety import inert


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("doctor", help="check the machine and a model file", description=__doc__)
    parser.add_argument("model", help="path of a .gguf file")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--sha256", metavar="EXPECTED", help="expected SHA-256 of the file")
    parser.add_argument("--no-sha256", action="store_true", help="skip hashing (unless a cached value exists)")
    parser.add_argument("--backend", choices=[BACKEND_EMBEDDED, BACKEND_LLAMA_SERVER], default=None,
                        help="engine whose supported tensor types are checked (default: llama-server, or embedded "
                             "when llama-server cannot run here)")
    parser.add_argument("--server-bin", metavar="PATH",
                        help="llama-server to check against (with --backend llama-server)")
    return parser


def _backend_types(args) -> tuple[set[int] | None, dict[str, Any], Check | None]:
    """Supported type ids of the chosen engine, facts about it, and a warning check when it is unusable."""
    if args.backend == BACKEND_EMBEDDED:
        return embedded_supported_types(), {"kind": BACKEND_EMBEDDED, "build": embedded_build()}, None
    try:
        from app.core.launch.backends import resolve_backend

        backend = resolve_backend(LaunchConfig(model=args.model, backend=BACKEND_LLAMA_SERVER,
                                               server_bin=args.server_bin))
    except UserError as error:
        check = Check("backend", Status.WARNING, error.message, error.next_step, action=error.action)
        return None, {"kind": BACKEND_LLAMA_SERVER, "build": None}, check
    facts = {"kind": backend.kind, "build": backend.build_number, "version": backend.version_text, "path": backend.path}
    return supported_types_for_build(backend.build_number), facts, None


def _hardware():
    """(the HardwareReport, its JSON form, the lines that describe it)."""
    from app.core.hardware.scan import scan_hardware

    report = scan_hardware()
    lines = [
        f"{report.os_name} {report.os_release}" + (" (WSL)" if report.is_wsl else ""),
        f"CPU: {report.cpu_model} ({report.cpu_cores_physical or '?'} cores)",
        f"RAM: {human_bytes(report.ram_total_bytes)} total, {human_bytes(report.usable_ram_bytes())} usable",
    ]
    for gpu in report.gpus:
        lines.append(f"GPU {gpu.index}: {gpu.name}, {human_bytes(gpu.vram_free_bytes)} free of "
                     f"{human_bytes(gpu.vram_total_bytes)}")
    if not report.gpus:
        lines.append(str(report.nvidia_note or T("No NVIDIA GPU found.", "未找到 NVIDIA GPU。")))
    lines += [f"GPU: {name}" for name in report.other_gpus]
    return report, report.to_dict(), lines


def _progress_printer(enabled: bool):
    if not enabled:
        return None
    state = {"last": -1}

    def show(done: int, total: int) -> None:
        percent = done * 100 // total if total else 100
        if percent != state["last"]:
            state["last"] = percent
            sys.stderr.write(f"\rsha256: {percent:3d}%")
            if done >= total:
                sys.stderr.write("\n")
            sys.stderr.flush()

    return show


def _model_dict(report) -> dict[str, Any] | None:
    if report.info is None:
        return None
    model = report.info.to_dict()
    model["metadata"] = {k: v for k, v in model["metadata"].items() if k != "tokenizer.chat_template"}
    model["sha256"] = report.sha256
    return model


def _params(n: int) -> str:
    return f"{n / 1e9:.2f} B" if n >= 1e9 else f"{n / 1e6:.1f} M" if n >= 1e6 else f"{n:,}"


def _print_text(hw_lines: list[str], backend: dict[str, Any], report, gpu_warning=None) -> None:
    print(str(T("Machine", "本机")))
    for line in hw_lines:
        print(f"  {line}")
    info = report.info
    if info is not None:
        print(str(T("Model", "模型")))
        name, arch, kind = (inert(value or "?") for value in (info.name, info.architecture, info.file_type_name))
        print(f"  \"{name}\" ({arch}), {kind}, {_params(info.parameter_count)} parameters, "
              f"{human_bytes(info.file_size)}")
        print(f"  layers {info.block_count}, context {info.context_length}, vocab {info.vocab_size}, "
              f"chat template {'yes' if info.has_chat_template else 'no'}")
        types = ", ".join(f"{inert(name)} x{v['count']}" for name, v in info.tensor_types.items())
        print(f"  tensor types: {types}")
    build = f" b{backend['build']}" if backend.get("build") else ""
    print(str(T("Checks (engine: {kind}{build})", "检查（引擎：{kind}{build}）", kind=backend["kind"], build=build)))
    failed = failed_summary(report.checks)
    if failed is not None:  # the bad news leads, as in the window
        print(f"  {failed}")
    for check in failures_first(report.checks):
        if gpu_warning is not None and check.id == GPU_CHECK_ID:  # every fix, each with its own command line
            print_check(replace(check, action=None))
            _print_gpu_fixes(gpu_warning)
        else:
            print_check(check)


def _engine_row(backend: dict[str, Any]) -> Check:
    """Whether the engine's quantized CPU kernels run on this processor (tested once per build, then cached)."""
    from app.core.engine import report
    from app.core.server.engine_check import run_check

    engine, path = backend["kind"], backend.get("path")
    try:
        check = run_check(engine, path)
    except UserError as error:  # the test models could not be made: say so, the file checks still count
        return Check(report.CHECK_ID, Status.WARNING, error.message, error.next_step, error.evidence, error.action)
    return report.check_row(check, engine, path)


def _print_gpu_fixes(warning) -> None:
    """The warning's fixes, each as the command or setting that applies it (the window shows them as buttons)."""
    from app.core.engine.rebuild import rebuild_command
    from app.core.problem import Fix

    for fix in warning.fixes:
        if fix.kind is Fix.SWITCH_ENGINE:
            print(str(T("       -> use it: --backend llama-server --server-bin {path}",
                        "       -> 使用它：--backend llama-server --server-bin {path}", path=fix.get("server_bin"))))
        elif fix.kind is Fix.REBUILD_ENGINE:
            command = " ".join(arg for arg in rebuild_command(str(fix.get("gpu")))[1:] if arg != "--progress")
            print(str(T("       -> rebuild: python {command}", "       -> 重新构建：python {command}",
                        command=command)))


def run(args) -> int:
    args.backend = chosen_backend(args, quiet=args.json)
    try:
        supported, backend, backend_check = _backend_types(args)
        hardware_report, hardware, hw_lines = _hardware()
        show_progress = not args.json and sys.stderr.isatty()
        report = validate(args.model, supported_types=supported, expected_sha256=args.sha256,
                          compute_sha256=not args.no_sha256, progress=_progress_printer(show_progress))
    except UserError as error:
        return report_user_error(error, args.json)
    if backend_check is not None:
        report.checks.insert(0, backend_check)
    else:
        report.checks.insert(0, _engine_row(backend))
    gpu_warning = engine_gpu_warning(hardware_report, args.backend, args.server_bin)  # an NVIDIA GPU, a CPU engine
    if gpu_warning is not None:
        report.checks.insert(1, gpu_warning.check())
    projector = found_projector(args.model, args.backend) if report.info is not None else None
    if projector is not None:
        report.checks.append(projector.check())
    if args.json:
        print_json({"hardware": hardware, "backend": backend, "model": _model_dict(report),
                    "gpu_engine": gpu_warning.to_dict() if gpu_warning is not None else None,
                    "projector": projector.to_dict() if projector is not None else None,
                    "status": report.status.value, "checks": [c.to_dict() for c in report.checks]})
    else:
        _print_text(hw_lines, backend, report, gpu_warning)
    return 1 if report.has_errors else 0
