"""CPU facts for the hardware scan: model name, core counts and the SIMD flags llama.cpp builds depend on.

A llama.cpp binary built for AVX2 or AVX-512 dies with 'Illegal instruction' on a CPU without them, so
the flags are reported by their /proc/cpuinfo names in a fixed order.
"""

from __future__ import annotations

import logging
import os
import platform
import subprocess
import sys
from dataclasses import dataclass

import psutil

from app.core.hardware.system import read_text

logger = logging.getLogger(__name__)

# Flags that decide which llama.cpp CPU build runs and how fast; x86 then Arm names.
RELEVANT_FLAGS = (
    "sse3", "ssse3", "sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c",
    "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx_vnni",
    "amx_tile", "amx_int8", "amx_bf16",
    "neon", "asimd", "asimddp", "i8mm", "sve", "sve2", "bf16",
)
# /proc/cpuinfo calls SSE3 'pni' (Prescott New Instructions).
_FLAG_ALIASES = {"pni": "sse3"}

# Windows IsProcessorFeaturePresent ids (winnt.h PF_*_INSTRUCTIONS_AVAILABLE).
_WINDOWS_FEATURES = {13: "sse3", 36: "ssse3", 37: "sse4_1", 38: "sse4_2", 39: "avx", 40: "avx2", 41: "avx512f"}


@dataclass(frozen=True)
class CpuInfo:
    model: str
    cores_physical: int | None
    cores_logical: int | None
    flags: tuple[str, ...]


def relevant_flags(raw: set[str]) -> tuple[str, ...]:
    normalized = {_FLAG_ALIASES.get(flag, flag) for flag in raw}
    return tuple(flag for flag in RELEVANT_FLAGS if flag in normalized)


def parse_cpuinfo(text: str | None) -> tuple[str | None, tuple[str, ...]]:
    """(model name, relevant flags) from /proc/cpuinfo text; x86 uses 'flags', Arm 'Features'."""
    model = None
    raw: set[str] = set()
    for line in (text or "").splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key = key.strip().lower()
        if key in ("model name", "hardware", "cpu model") and model is None and value.strip():
            model = value.strip()
        elif key in ("flags", "features") and not raw:
            raw = set(value.split())
    return model, relevant_flags(raw)


def _run(argv: list[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=3, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        logger.debug("%s did not run", argv[0], exc_info=True)
        return ""


def _windows_cpu() -> tuple[str | None, tuple[str, ...]]:
    if sys.platform != "win32":  # the registry and kernel32 exist there only
        return None, ()
    model = None
    try:
        import winreg

        key = winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, r"HARDWARE\DESCRIPTION\System\CentralProcessor\0")
        model = str(winreg.QueryValueEx(key, "ProcessorNameString")[0]).strip()
    except (ImportError, OSError):
        logger.debug("CPU name not in the registry", exc_info=True)
    raw: set[str] = set()
    try:
        import ctypes

        present = ctypes.windll.kernel32.IsProcessorFeaturePresent
        raw = {name for feature_id, name in _WINDOWS_FEATURES.items() if present(feature_id)}
    except (AttributeError, OSError):
        logger.debug("CPU features not readable from kernel32", exc_info=True)
    return model, relevant_flags(raw)


def _mac_cpu() -> tuple[str | None, tuple[str, ...]]:
    model = _run(["sysctl", "-n", "machdep.cpu.brand_string"]).strip() or None
    features = _run(["sysctl", "-n", "machdep.cpu.features", "machdep.cpu.leaf7_features"]).lower()
    raw = {name.replace(".", "_") for name in features.split()}
    if platform.machine() == "arm64":
        raw |= {"neon", "asimd", "asimddp"}
    return model, relevant_flags(raw)


def _model_and_flags() -> tuple[str | None, tuple[str, ...]]:
    system = platform.system()
    if system == "Linux":
        return parse_cpuinfo(read_text("/proc/cpuinfo"))
    if system == "Windows":
        return _windows_cpu()
    if system == "Darwin":
        return _mac_cpu()
    return None, ()


def read_cpu() -> CpuInfo:
    try:
        model, flags = _model_and_flags()
    except Exception:  # an odd platform must not break the scan
        logger.warning("CPU model and flags unreadable", exc_info=True)
        model, flags = None, ()
    return CpuInfo(
        model=model or platform.processor() or platform.machine() or "unknown CPU",
        cores_physical=psutil.cpu_count(logical=False),
        cores_logical=psutil.cpu_count(logical=True) or os.cpu_count(),
        flags=flags,
    )
