"""Which graphics-card backend the built-in engine can be rebuilt with here: CUDA when NVIDIA's compiler (nvcc)
is found, Vulkan when the Vulkan SDK's shader compiler (glslc) is, and the CMake arguments each one adds.

Standard library only: ``python -m app.core.engine.build --gpu cuda`` runs it before any dependency exists.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

CUDA = "cuda"
VULKAN = "vulkan"
GPU_KINDS = (CUDA, VULKAN)
# The CMake options llama.cpp reads; any of them in a recorded build means the build has that backend.
GPU_OPTIONS = {CUDA: "-DGGML_CUDA=on", VULKAN: "-DGGML_VULKAN=on"}
_CUDA_PLACES = ("/usr/local/cuda/bin", "/opt/cuda/bin", "/usr/lib/nvidia-cuda-toolkit/bin")


@dataclass(frozen=True)
class GpuBuild:
    """A backend the engine can be built with here, and the compiler that proves it."""

    kind: str  # CUDA | VULKAN
    compiler: str  # the nvcc or glslc file

    @property
    def label(self) -> str:
        return "CUDA" if self.kind == CUDA else "Vulkan"

    def cmake_args(self) -> tuple[str, ...]:
        if self.kind == CUDA:  # nvcc off PATH (a plain toolkit install): tell CMake where it is
            on_path = shutil.which("nvcc") == self.compiler
            return (GPU_OPTIONS[CUDA],) + (() if on_path else (f"-DCMAKE_CUDA_COMPILER={self.compiler}",))
        return (GPU_OPTIONS[VULKAN],)


def _first_file(names: list[Path]) -> str | None:
    return next((str(path) for path in names if path.is_file() and os.access(path, os.X_OK)), None)


def find_nvcc() -> str | None:
    exe = "nvcc.exe" if os.name == "nt" else "nvcc"
    on_path = shutil.which("nvcc")
    if on_path:
        return on_path
    places = [Path(os.environ[var]) / "bin" for var in ("CUDA_PATH", "CUDA_HOME") if os.environ.get(var)]
    return _first_file([place / exe for place in places + [Path(p) for p in _CUDA_PLACES]])


def find_glslc() -> str | None:
    exe = "glslc.exe" if os.name == "nt" else "glslc"
    on_path = shutil.which("glslc")
    if on_path:
        return on_path
    sdk = os.environ.get("VULKAN_SDK")
    return _first_file([Path(sdk) / "bin" / exe]) if sdk else None


def available_gpu_builds() -> list[GpuBuild]:
    """The backends this computer can compile, CUDA first (faster on NVIDIA cards)."""
    found = []
    nvcc = find_nvcc()
    if nvcc:
        found.append(GpuBuild(CUDA, nvcc))
    glslc = find_glslc()
    if glslc:
        found.append(GpuBuild(VULKAN, glslc))
    return found


def gpu_build(kind: str) -> GpuBuild | None:
    return next((build for build in available_gpu_builds() if build.kind == kind), None)


def recorded_gpu_args(cmake_args: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """The GPU part of a recorded build's CMake arguments (a set-up keeps it instead of going back to CPU-only)."""
    keep = tuple(GPU_OPTIONS.values()) + ("-DCMAKE_CUDA_COMPILER=",)
    return tuple(arg for arg in cmake_args if arg.startswith(keep))
