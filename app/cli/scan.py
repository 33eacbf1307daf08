"""`gguf-launcher scan [--json]`: what this machine offers a model."""

from __future__ import annotations

import argparse

from app.cli._output import print_check, print_json
from app.core.hardware.scan import GpuInfo, HardwareReport, scan_hardware
from app.core.text import T, human_bytes


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("scan", help="show RAM, CPU, GPUs and limits of this machine")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    return parser


def run(args: argparse.Namespace) -> int:
    report = scan_hardware()
    engine = _engine_row()
    if args.json:
        print_json(dict(report.to_dict(), engine_check=engine.to_dict()))
    else:
        print("\n".join(describe(report)))
        print(str(T("Engine:", "引擎：")))
        print_check(engine)
    return 0


def _engine_row():
    """The built-in engine's last self-test on this processor (scan stays quick: it never runs the test)."""
    from app.core.engine import report, selftest

    return report.check_row(selftest.cached("embedded"), "embedded")


def describe(report: HardwareReport) -> list[str]:
    """The report as the human-readable lines `scan` prints."""
    lines = [str(T("System: {os}", "系统：{os}", os=report.os_description or report.os_name))]
    if report.is_wsl:
        passthrough = T("GPU passed through", "显卡已接入") if report.wsl_gpu_passthrough else T("no GPU", "无显卡")
        lines.append(str(T("  WSL{version} ({gpu})", "  WSL{version}（{gpu}）", version=report.wsl_version or "",
                           gpu=passthrough)))
    if report.in_container:
        lines.append(str(T("  inside a container ({kind})", "  运行在容器中（{kind}）", kind=report.container_kind)))
    lines += _memory_lines(report)
    lines += _cpu_lines(report)
    lines += _gpu_lines(report)
    if report.notes:
        lines.append(str(T("Notes:", "提示：")))
        lines += [f"  - {note}" for note in report.notes]
    return lines


def _memory_lines(report: HardwareReport) -> list[str]:
    lines = [str(T(
        "RAM: {total} total, {available} available, {usable} usable for a model",
        "内存：共 {total}，可用 {available}，模型可用 {usable}",
        total=human_bytes(report.ram_total_bytes), available=human_bytes(report.ram_available_bytes),
        usable=human_bytes(report.usable_ram_bytes()),
    ))]
    if report.cgroup_memory_limit_bytes is not None:
        lines.append(str(T(
            "  container memory limit {limit} ({usage} in use)", "  容器内存上限 {limit}（已用 {usage}）",
            limit=human_bytes(report.cgroup_memory_limit_bytes), usage=human_bytes(report.cgroup_memory_usage_bytes),
        )))
    return lines


def _cpu_lines(report: HardwareReport) -> list[str]:
    flags = " ".join(report.cpu_flags) or str(T("(not readable)", "（无法读取）"))
    return [
        str(T(
            "CPU: {model}, {physical} cores / {logical} threads",
            "CPU：{model}，{physical} 核 / {logical} 线程",
            model=report.cpu_model, physical=report.cpu_cores_physical or "?", logical=report.cpu_cores_logical or "?",
        )),
        str(T("  SIMD: {flags}", "  指令集：{flags}", flags=flags)),
    ]


def _gpu_lines(report: HardwareReport) -> list[str]:
    lines = [] if report.gpus else [str(T("NVIDIA GPU: none", "NVIDIA 显卡：无"))]
    for gpu in report.gpus:
        lines += _one_gpu(gpu)
    for name in report.other_gpus:
        lines.append(str(T("Other GPU: {name}", "其他显卡：{name}", name=name)))
    return lines


def _one_gpu(gpu: GpuInfo) -> list[str]:
    lines = [
        str(T(
            "GPU {index}: {name} (compute {cc}), VRAM {total} total, {free} free",
            "显卡 {index}：{name}（计算能力 {cc}），显存共 {total}，空闲 {free}",
            index=gpu.index, name=gpu.name, cc=gpu.compute_capability or "?",
            total=human_bytes(gpu.vram_total_bytes), free=human_bytes(gpu.vram_free_bytes),
        )),
        str(T(
            "  driver {driver}, supports CUDA up to {cuda}", "  驱动 {driver}，最高支持 CUDA {cuda}",
            driver=gpu.driver_version or "?", cuda=gpu.cuda_driver_version or "?",
        )),
    ]
    for process in gpu.other_processes:
        used = human_bytes(process.used_bytes) if process.used_bytes is not None else "?"
        lines.append(str(T("  in use by {name} (pid {pid}): {used}", "  {name}（pid {pid}）占用 {used}",
                           name=process.name, pid=process.pid, used=used)))
    return lines
