"""NVIDIA GPUs through NVML (pynvml), read without ever raising.

NVML is initialised once and kept open, so :func:`read_gpus` costs a few NVML calls and can feed 1 s
live bars. A failed initialisation is remembered (with the sentence explaining it) until a full scan
asks to retry. Every NVML call is wrapped: one unsupported query leaves one field None, not the scan.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import psutil

from app.core.text import T, Text

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GpuProcess:
    pid: int
    name: str
    used_bytes: int | None  # None where NVML cannot say (Windows WDDM, WSL)


@dataclass(frozen=True)
class GpuInfo:
    index: int
    name: str
    uuid: str | None
    vram_total_bytes: int | None
    vram_free_bytes: int | None
    vram_used_bytes: int | None
    other_processes: list[GpuProcess] = field(default_factory=list)
    driver_version: str | None = None
    cuda_driver_version: str | None = None  # highest CUDA version the driver supports, e.g. "12.4"
    compute_capability: str | None = None  # e.g. "8.6"
    pci_bus_id: str | None = None  # "0000:01:00.0", as CUDA writes it; NVML and CUDA (pinned) order GPUs by it

    @property
    def other_processes_bytes(self) -> int:
        return sum(p.used_bytes or 0 for p in self.other_processes)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"other_processes_bytes": self.other_processes_bytes}


class _Nvml:
    """The pynvml module once nvmlInit succeeded, or the sentence saying why it did not."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.module: Any = None
        self.failure: Text | None = None

    def get(self, retry: bool = False) -> Any:
        with self.lock:
            if self.module is None and (self.failure is None or retry):
                self.module, self.failure = _initialise()
            return self.module

    def forget(self) -> None:
        """Drop the cached outcome (tests; a driver installed while the app runs)."""
        with self.lock:
            self.module, self.failure = None, None


_nvml = _Nvml()


def _initialise() -> tuple[Any, Text | None]:
    try:
        import pynvml
    except ImportError:
        return None, T(
            "No NVIDIA GPU found: the NVIDIA monitoring library for Python (nvidia-ml-py) is missing from "
            "this install. Models run on the CPU; reinstall GGUF Launcher to detect NVIDIA GPUs.",
            "未找到 NVIDIA 显卡：本安装缺少 NVIDIA 监控库（nvidia-ml-py）。模型将在 CPU 上运行；"
            "重新安装 GGUF Launcher 即可检测 NVIDIA 显卡。",
        )
    try:
        pynvml.nvmlInit()
    except Exception as error:  # noqa: BLE001 - NVMLError, OSError from a broken library, anything
        logger.debug("NVML did not start: %r", error)  # the user reads it as the GPU note
        return None, _init_failure(pynvml, error)
    return pynvml, None


def _init_failure(pynvml: Any, error: Exception) -> Text:
    code = getattr(error, "value", None)
    if code == getattr(pynvml, "NVML_ERROR_LIB_RM_VERSION_MISMATCH", 18):
        return T(
            "No NVIDIA GPU usable right now: the NVIDIA driver was updated but the old one is still loaded. "
            "Restart the computer to use the GPU.",
            "暂时无法使用 NVIDIA 显卡：显卡驱动已更新，但仍在运行旧驱动。请重启电脑后再使用显卡。",
        )
    if code == getattr(pynvml, "NVML_ERROR_DRIVER_NOT_LOADED", 9):
        return T(
            "No NVIDIA GPU found: an NVIDIA driver is installed but not loaded. Restart the computer; "
            "if that does not help, reinstall the driver (`nvidia-smi` should list your GPU).",
            "未找到 NVIDIA 显卡：已安装 NVIDIA 驱动但未加载。请重启电脑；若仍无效，请重新安装驱动"
            "（`nvidia-smi` 应能列出显卡）。",
        )
    if code == getattr(pynvml, "NVML_ERROR_NO_PERMISSION", 4):
        return T(
            "No NVIDIA GPU usable: this user may not access the NVIDIA driver. Ask the administrator for "
            "access to the GPU (the 'video' group on Linux).",
            "无法使用 NVIDIA 显卡：当前用户无权访问 NVIDIA 驱动。请让管理员授予显卡权限（Linux 上为 video 组）。",
        )
    if code is None or code == getattr(pynvml, "NVML_ERROR_LIBRARY_NOT_FOUND", 12):
        return T(
            "No NVIDIA GPU found (no NVIDIA driver is installed). That is fine: models run on the CPU, only slower.",
            "未找到 NVIDIA 显卡（未安装 NVIDIA 驱动）。这没有问题：模型会在 CPU 上运行，只是更慢。",
        )
    return T(
        "No NVIDIA GPU found: the NVIDIA driver answered '{error}'. Models run on the CPU.",
        "未找到 NVIDIA 显卡：NVIDIA 驱动返回“{error}”。模型将在 CPU 上运行。",
        error=str(error),
    )


def _call(function: Callable[..., Any] | None, *args: Any) -> Any:
    if function is None:
        return None
    try:
        return function(*args)
    except Exception as error:  # noqa: BLE001 - NVML raises for "not supported" on many consumer/WSL setups
        logger.debug("NVML %s: %r", getattr(function, "__name__", function), error)
        return None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def format_cuda_version(value: int | None) -> str | None:
    """NVML's 12040 -> '12.4'."""
    if not value or value <= 0:
        return None
    return f"{value // 1000}.{(value % 1000) // 10}"


def _process_lists(pynvml: Any, handle: Any) -> list[Any] | None:
    """Compute and graphics processes on one GPU; None when NVML cannot list them at all."""
    found: list[Any] | None = None
    for base in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
        # The unversioned call needs a newer driver (_v3); older drivers only have _v2.
        for name in (base, base + "_v2"):
            processes = _call(getattr(pynvml, name, None), handle)
            if processes is not None:
                found = (found or []) + list(processes)
                break
    return found


def _merged_usage(processes: Iterable[Any]) -> dict[int, int | None]:
    usage: dict[int, int | None] = {}
    for process in processes:
        pid = int(getattr(process, "pid", 0) or 0)
        used = getattr(process, "usedGpuMemory", None)
        previous = usage.get(pid)
        usage[pid] = used if previous is None else max(previous, used or 0)
    return usage


def _process_name(pynvml: Any, pid: int) -> str:
    name = _text(_call(getattr(pynvml, "nvmlSystemGetProcessName", None), pid))
    if name:
        return os.path.basename(name)
    try:
        return psutil.Process(pid).name()
    except (psutil.Error, ValueError):
        return f"pid {pid}"


def _gpu(pynvml: Any, index: int, driver: str | None, cuda: str | None, exclude: set[int]) -> GpuInfo | None:
    handle = _call(pynvml.nvmlDeviceGetHandleByIndex, index)
    if handle is None:
        return None
    memory = _call(pynvml.nvmlDeviceGetMemoryInfo, handle)
    capability = _call(getattr(pynvml, "nvmlDeviceGetCudaComputeCapability", None), handle)
    usage = _merged_usage(_process_lists(pynvml, handle) or [])
    others = [
        GpuProcess(pid, _process_name(pynvml, pid), used)
        for pid, used in sorted(usage.items())
        if pid not in exclude
    ]
    return GpuInfo(
        index=index,
        name=_text(_call(pynvml.nvmlDeviceGetName, handle)) or f"NVIDIA GPU {index}",
        uuid=_text(_call(pynvml.nvmlDeviceGetUUID, handle)),
        vram_total_bytes=getattr(memory, "total", None),
        vram_free_bytes=getattr(memory, "free", None),
        vram_used_bytes=getattr(memory, "used", None),
        other_processes=others,
        driver_version=driver,
        cuda_driver_version=cuda,
        compute_capability=f"{capability[0]}.{capability[1]}" if capability else None,
        pci_bus_id=pci_bus_id(_text(getattr(_call(pynvml.nvmlDeviceGetPciInfo, handle), "busId", None))),
    )


def pci_bus_id(nvml_bus_id: str | None) -> str | None:
    """NVML's "00000000:01:00.0" in CUDA's spelling, "0000:01:00.0" (lower case, four-digit domain)."""
    parts = (nvml_bus_id or "").strip().lower().split(":")
    if len(parts) != 3:
        return None
    try:
        return f"{int(parts[0], 16):04x}:{parts[1]}:{parts[2]}"
    except ValueError:
        return None


def nvidia_gpus(exclude_pids: Iterable[int] = (), *, retry: bool = False) -> tuple[list[GpuInfo], Text | None]:
    """(GPUs, None) or ([], the sentence saying why there is none). Never raises."""
    pynvml = _nvml.get(retry=retry)
    if pynvml is None:
        return [], _nvml.failure
    count = _call(pynvml.nvmlDeviceGetCount) or 0
    driver = _text(_call(pynvml.nvmlSystemGetDriverVersion))
    cuda = format_cuda_version(_call(getattr(pynvml, "nvmlSystemGetCudaDriverVersion", None)))
    exclude = {os.getpid(), *exclude_pids}
    gpus = [gpu for i in range(count) if (gpu := _gpu(pynvml, i, driver, cuda, exclude)) is not None]
    if not gpus:
        return [], T(
            "No NVIDIA GPU found: the NVIDIA driver is installed but lists no GPU.",
            "未找到 NVIDIA 显卡：已安装 NVIDIA 驱动，但驱动没有列出任何显卡。",
        )
    return gpus, None


def read_gpus(exclude_pids: Iterable[int] = ()) -> list[GpuInfo]:
    """NVIDIA GPUs now (fast, for live bars); [] without NVIDIA. ``exclude_pids`` are not 'other' processes."""
    return nvidia_gpus(exclude_pids)[0]


def process_vram_by_device(pid: int) -> dict[str, int] | None:
    """VRAM NVML attributes to ``pid`` on each GPU, keyed by the GPU's UUID (never by index: CUDA may number the
    cards otherwise); 0 where it holds none; None when nobody can tell."""
    pynvml = _nvml.get()
    if pynvml is None:
        return None
    found: dict[str, int] = {}
    unknown = False
    for index in range(_call(pynvml.nvmlDeviceGetCount) or 0):
        handle = _call(pynvml.nvmlDeviceGetHandleByIndex, index)
        processes = _process_lists(pynvml, handle) if handle is not None else None
        if processes is None:
            return None
        usage = _merged_usage(processes)
        if pid in usage and usage[pid] is None:
            return None
        found[_text(_call(pynvml.nvmlDeviceGetUUID, handle)) or f"GPU {index}"] = usage.get(pid) or 0
        # In a container NVML reports host PIDs: if listed PIDs do not exist here, a miss proves nothing.
        unknown = unknown or any(not psutil.pid_exists(other) for other in usage if other > 0)
    return None if unknown and not any(found.values()) else found


def process_vram_bytes(pid: int) -> int | None:
    """VRAM NVML attributes to ``pid`` summed over GPUs; 0 if it holds none; None when nobody can tell."""
    per_device = process_vram_by_device(pid)
    return None if per_device is None else sum(per_device.values())
