"""Which CPU kernels an engine was compiled with: they decide which weights llama.cpp's CPU backend copies.

ggml asks its own compile-time macros, not the processor: ``ggml_cpu_has_avx2()`` is ``#if defined(__AVX2__)``,
and the AMX buffer exists only ``#if defined(__AMX_INT8__) && defined(__AVX512VNNI__)`` (ggml-cpu.cpp,
ggml_backend_cpu_get_extra_buffer_types). So two engines on one processor can hold different memory: the plan
reads how the engine was built (the set-up's record of its CMake options, app.core.engine.build_record) and falls
back to the processor's flags for an engine the app did not build (a release llama-server loads the CPU variant
for the processor it runs on) or a native build (-march=native compiles what the processor advertises).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable
from dataclasses import dataclass

log = logging.getLogger(__name__)

# ggml/CMakeLists.txt: with GGML_NATIVE=OFF these default to ON (INS_ENB), the AVX-512 and AMX ones to OFF
_NON_NATIVE_DEFAULTS = {"GGML_SSE42": True, "GGML_AVX": True, "GGML_AVX2": True, "GGML_BMI2": True,
                        "GGML_FMA": True, "GGML_F16C": True, "GGML_CPU_REPACK": True}


@dataclass(frozen=True)
class CpuKernels:
    """The compile-time switches of ggml's CPU backend that change what it holds in memory."""

    avx2: bool = False
    avx512: bool = False  # AVX512F
    amx: bool = False  # AMX-INT8 with AVX512-VNNI: the AMX buffer (ggml-cpu/amx)
    arm_dotprod: bool = False
    arm_i8mm: bool = False
    repack: bool = True  # GGML_CPU_REPACK, on by default: the CPU_REPACK buffer (ggml-cpu/repack.cpp)
    kleidiai: bool = False  # GGML_CPU_KLEIDIAI, Arm only and off by default
    source: str = "processor"  # "build" (the engine's recorded CMake options) or "processor" (its flags)


NO_KERNELS = CpuKernels(repack=False)


def from_cmake_args(args: Iterable[str]) -> CpuKernels | None:
    """The kernels of a build made with ``args``; None for a native build (it follows the processor)."""
    options: dict[str, bool] = {}
    for arg in args:
        name, sep, value = str(arg).removeprefix("-D").partition("=")
        if sep and name.startswith("GGML_"):
            options[name] = value.upper() in ("ON", "1", "TRUE", "YES")
    if options.get("GGML_NATIVE", True):
        return None
    on = {**_NON_NATIVE_DEFAULTS, **options}
    return CpuKernels(avx2=on.get("GGML_AVX2", False), avx512=on.get("GGML_AVX512", False),
                      amx=on.get("GGML_AMX_INT8", False) and on.get("GGML_AVX512_VNNI", False),
                      repack=on.get("GGML_CPU_REPACK", True), kleidiai=on.get("GGML_CPU_KLEIDIAI", False),
                      source="build")


def from_flags(flags: Iterable[str]) -> CpuKernels:
    """The kernels a build for a processor with these /proc/cpuinfo-style flags has."""
    flags = set(flags)
    return CpuKernels(avx2="avx2" in flags, avx512="avx512f" in flags,
                      amx="amx_int8" in flags and "avx512_vnni" in flags,
                      arm_dotprod="asimddp" in flags, arm_i8mm="i8mm" in flags)


@functools.cache
def _this_processor() -> CpuKernels:
    from app.core.hardware.cpu import read_cpu

    return from_flags(read_cpu().flags)


def for_engine(backend: str, server_bin: str | None = None) -> CpuKernels:
    """The kernels of the engine ``backend`` (``server_bin`` for llama-server) as it was built here; read each time
    (a small file), so a rebuild in a running app is planned at once."""
    from app.core.engine import build_record

    record = build_record.for_engine(backend, server_bin)
    kernels = from_cmake_args(record.cmake_args) if record is not None else None
    if kernels is None:
        log.debug("no recorded build for %s (%s): planning with this processor's flags", backend, server_bin)
        return _this_processor()
    return kernels
