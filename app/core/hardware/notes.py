"""Plain sentences about a hardware report: what limits the model and what the user can do about it."""

from __future__ import annotations

import platform
from collections.abc import Sequence

from app.core.hardware.report import HardwareReport
from app.core.text import T, Text, human_bytes

# A desktop session alone holds a few hundred MiB on the card; mention other programs above that.
OTHER_VRAM_NOTE_BYTES = 256 * 1024**2


def build_notes(report: HardwareReport, nvidia_adapters: Sequence[str] = ()) -> list[Text]:
    notes: list[Text] = []
    notes += _gpu_notes(report, list(nvidia_adapters))
    notes += _memory_notes(report)
    notes += _cpu_notes(report)
    return notes


def _gpu_notes(report: HardwareReport, nvidia_adapters: list[str]) -> list[Text]:
    notes: list[Text] = []
    if not report.gpus:
        if report.nvidia_note is not None:
            notes.append(report.nvidia_note)
        if nvidia_adapters:
            notes.append(T(
                "The system shows {name}, but its NVIDIA driver does not answer: install or repair the "
                "NVIDIA driver to use it.",
                "系统中有 {name}，但其 NVIDIA 驱动没有响应：请安装或修复 NVIDIA 驱动后再使用。",
                name=nvidia_adapters[0],
            ))
        if report.in_container and not report.is_wsl:
            notes.append(T(
                "No graphics card is visible, and this app runs inside a container ({kind}): a container sees "
                "the computer's graphics card only when it was started with access to it. If this computer has "
                "one, ask whoever set up the container to start it with graphics card access.",
                "看不到显卡，且本应用运行在容器（{kind}）中：容器只有在启动时被授予显卡权限才能看到电脑的显卡。"
                "如果这台电脑有显卡，请让设置该容器的人以显卡权限重新启动它。",
                kind=report.container_kind or "container",
            ))
    notes += _wsl_notes(report)
    for gpu in report.gpus:
        notes += _other_process_notes(gpu)
    return notes


def _wsl_notes(report: HardwareReport) -> list[Text]:
    if report.wsl_version == 1:
        return [T(
            "WSL1 cannot use the GPU. Convert this distribution to WSL2 (`wsl --set-version <name> 2` in "
            "Windows PowerShell) to use it.",
            "WSL1 无法使用显卡。请在 Windows PowerShell 中运行 `wsl --set-version <名称> 2` 将此发行版转换为 WSL2。",
        )]
    if report.wsl_version == 2 and not report.wsl_gpu_passthrough:
        return [T(
            "WSL2 does not pass the GPU through here (/dev/dxg or /usr/lib/wsl/lib/libcuda.so is missing). "
            "Install the current NVIDIA driver on Windows (not inside Linux) and run `wsl --update`.",
            "此 WSL2 没有接入显卡（缺少 /dev/dxg 或 /usr/lib/wsl/lib/libcuda.so）。请在 Windows 中（不是在 "
            "Linux 里）安装最新 NVIDIA 驱动，然后运行 `wsl --update`。",
        )]
    if report.wsl_version == 2:
        return [T(
            "Running in WSL2 with the GPU passed through from Windows. Windows programs share the same VRAM.",
            "运行在 WSL2 中，显卡由 Windows 接入。Windows 程序与此共享同一块显存。",
        )]
    return []


def _other_process_notes(gpu) -> list[Text]:
    if not gpu.other_processes:
        return []
    if all(p.used_bytes is None for p in gpu.other_processes):
        return [T(
            "GPU {index}: {count} other program(s) use the GPU; the driver does not say how much VRAM each "
            "holds here (Windows/WSL), only the total in use ({used}).",
            "显卡 {index}：另有 {count} 个程序在使用显卡；此环境（Windows/WSL）下驱动不报告每个程序的显存，"
            "只知道总共已用 {used}。",
            index=gpu.index, count=len(gpu.other_processes), used=human_bytes(gpu.vram_used_bytes),
        )]
    if gpu.other_processes_bytes < OTHER_VRAM_NOTE_BYTES:
        return []
    biggest = sorted(gpu.other_processes, key=lambda p: p.used_bytes or 0, reverse=True)[:3]
    names = ", ".join(f"{p.name} {human_bytes(p.used_bytes)}" for p in biggest)
    return [T(
        "GPU {index}: other programs already hold {used} of VRAM ({names}). "
        "Closing them leaves more room for the model.",
        "显卡 {index}：其他程序已占用 {used} 显存（{names}）。关闭它们可为模型腾出更多空间。",
        index=gpu.index, used=human_bytes(gpu.other_processes_bytes), names=names,
    )]


def _memory_notes(report: HardwareReport) -> list[Text]:
    limit = report.cgroup_memory_limit_bytes
    if limit is None or limit >= report.ram_total_bytes:
        return []
    return [T(
        "A container memory limit of {limit} applies; the out-of-memory killer uses it, not the {ram} of RAM.",
        "此处有 {limit} 的容器内存上限；内存不足时系统按这个上限终止程序，而不是按 {ram} 的物理内存。",
        limit=human_bytes(limit), ram=human_bytes(report.ram_total_bytes),
    )]


def _cpu_notes(report: HardwareReport) -> list[Text]:
    is_x86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")
    if not is_x86 or not report.cpu_flags or "avx2" in report.cpu_flags:
        return []
    return [T(
        "This CPU has no AVX2: a llama.cpp build made for newer CPUs stops with 'Illegal instruction'. "
        "Use a build for older CPUs (without AVX2).",
        "此 CPU 不支持 AVX2：为新款 CPU 编译的 llama.cpp 会因“Illegal instruction（非法指令）”而退出。"
        "请使用为旧 CPU（不含 AVX2）编译的版本。",
    )]
