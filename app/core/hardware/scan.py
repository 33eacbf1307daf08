"""What this machine offers a model: RAM (and the container limit that really applies), CPU, GPUs.

``scan_hardware()`` is the full picture (tens of milliseconds, a subprocess for `lspci`);
``read_gpus()`` and ``process_vram_bytes()`` (``process_vram_by_device()``: per GPU, by UUID) are the fast
live readings for 1 s bars and the supervisor. Nothing here raises for a missing driver, library or file:
absence is a normal result with a note that says so.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass

import psutil

from app.core.hardware.cgroup import read_cgroup_memory
from app.core.hardware.cpu import read_cpu
from app.core.hardware.gpu import (
    GpuInfo,
    GpuProcess,
    nvidia_gpus,
    process_vram_by_device,
    process_vram_bytes,
    read_gpus,
)
from app.core.hardware.notes import build_notes
from app.core.hardware.other_gpus import read_display_adapters
from app.core.hardware.report import HardwareReport
from app.core.hardware.system import os_description, read_container, read_wsl

__all__ = [
    "GpuInfo", "GpuProcess", "HardwareReport", "MemoryReading", "process_vram_by_device", "process_vram_bytes",
    "read_gpus",
    "read_memory", "scan_hardware",
]


def scan_hardware(exclude_pids: tuple[int, ...] = ()) -> HardwareReport:
    """Scan the machine now. Retries NVML if an earlier attempt failed. Never raises."""
    memory = psutil.virtual_memory()
    cpu = read_cpu()
    wsl = read_wsl()
    container = read_container()
    cgroup = read_cgroup_memory()
    gpus, nvidia_note = nvidia_gpus(exclude_pids, retry=True)
    adapters = read_display_adapters()
    report = HardwareReport(
        os_name=platform.system(),
        os_release=platform.release(),
        is_wsl=wsl.version is not None,
        wsl_gpu_passthrough=wsl.gpu_passthrough,
        in_container=container is not None,
        cgroup_memory_limit_bytes=cgroup.limit_bytes if cgroup else None,
        ram_total_bytes=int(memory.total),
        ram_available_bytes=int(memory.available),
        cpu_model=cpu.model,
        cpu_cores_physical=cpu.cores_physical,
        cpu_cores_logical=cpu.cores_logical,
        cpu_flags=list(cpu.flags),
        gpus=gpus,
        # NVML already names working NVIDIA GPUs; an NVIDIA adapter without a driver stays listed here.
        other_gpus=[a.name for a in adapters if not (a.is_nvidia and gpus)],
        os_description=os_description(),
        wsl_version=wsl.version,
        container_kind=container,
        cgroup_memory_usage_bytes=cgroup.usage_bytes if cgroup else None,
        cgroup_memory_headroom_bytes=cgroup.headroom_bytes() if cgroup else None,
        nvidia_note=nvidia_note,
    )
    report.notes = build_notes(report, nvidia_adapters=[a.name for a in adapters if a.is_nvidia])
    return report


@dataclass(frozen=True)
class MemoryReading:
    """RAM now, as the OOM killer sees it: the cgroup limit replaces physical RAM where it is smaller."""

    total_bytes: int
    available_bytes: int
    usable_bytes: int


def read_memory() -> MemoryReading:
    """A fast RAM reading for live bars (psutil + two cgroup files). Never raises."""
    memory = psutil.virtual_memory()
    total, available = int(memory.total), int(memory.available)
    cgroup = read_cgroup_memory()
    headroom = cgroup.headroom_bytes() if cgroup else None
    limit = cgroup.limit_bytes if cgroup else None
    return MemoryReading(
        total_bytes=min(total, limit) if limit else total,
        available_bytes=available,
        usable_bytes=min(available, headroom) if headroom is not None else available,
    )
