"""What a CUDA build of llama.cpp needs from the card and the driver, as NVIDIA publishes it.

- Driver: "CUDA 13.x >= 580, CUDA 12.x >= 525" (minimum driver branch for a CUDA major release, minor version
  compatibility): https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html (Table 1,
  "CUDA Toolkit 11.x, 12.x, and 13.x Driver Version Ranges").
- Card: CUDA 13.0 removed offline compilation and library support for Maxwell, Pascal and Volta, so a CUDA 13 build
  needs compute capability 7.5 (Turing) or newer (the CUDA 12.8 release notes' "Deprecated Architectures", quoted in
  pytorch/pytorch#157517: "offline compilation and library support will be removed in the next major CUDA Toolkit
  version release"; NVIDIA/cuDecomp#97: "CUDA 13.0 dropped support for Volta (SM70), but not Turing (SM75)"; seen in
  the field as altic-dev/FluidVoice#988: a GTX 1070, CC 6.1, on llama.cpp's win-cuda-13.3 build falls back to the
  CPU). No lower bound is claimed for CUDA 12 builds (the archs a build carries differ between builders).

Pure values and comparisons: no NVML call, no file read (the caller passes what it read).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# CUDA major version -> (minimum driver branch, minimum compute capability)
MIN_DRIVER_BRANCH = {12: 525, 13: 580}
MIN_COMPUTE_CAPABILITY = {13: (7, 5)}
COMPATIBILITY_SOURCE = "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html"


def parse_capability(text: str | None) -> tuple[int, int] | None:
    """"6.1" -> (6, 1); None when unknown or unreadable."""
    match = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", text or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def driver_branch(driver_version: str | None) -> int | None:
    """"551.61" / "580.65.06" -> 551 / 580 (the driver branch NVIDIA's tables are written in)."""
    match = re.match(r"\s*(\d+)", driver_version or "")
    return int(match.group(1)) if match else None


def cuda_major(version: str | None) -> int | None:
    """"12.4" / "13" -> 12 / 13."""
    match = re.match(r"\s*(\d+)", version or "")
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class CardFacts:
    """One NVIDIA card as NVML read it (app.core.hardware.gpu.GpuInfo's fields)."""

    name: str
    compute_capability: str | None = None  # "8.6"
    driver_version: str | None = None  # "551.61"
    cuda_driver_version: str | None = None  # highest CUDA version the driver supports, "12.4"


def card_too_old(card: CardFacts, major: int) -> bool:
    """Proven only when the card's compute capability is known and below what a CUDA ``major`` build needs."""
    capability = parse_capability(card.compute_capability)
    need = MIN_COMPUTE_CAPABILITY.get(major)
    return capability is not None and need is not None and capability < need


def driver_too_old(card: CardFacts, major: int) -> bool:
    """Proven only from what the driver itself says: the highest CUDA version it supports (NVML), else its branch
    against NVIDIA's table. Unknown readings prove nothing."""
    supported = cuda_major(card.cuda_driver_version)
    if supported is not None:
        return supported < major
    branch = driver_branch(card.driver_version)
    need = MIN_DRIVER_BRANCH.get(major)
    return branch is not None and need is not None and branch < need


def min_driver_text(major: int | None) -> str:
    """"580" for CUDA 13, "525" for CUDA 12; both when the build's CUDA version is unknown."""
    if major in MIN_DRIVER_BRANCH:
        return str(MIN_DRIVER_BRANCH[major])
    return " / ".join(f"CUDA {m}: {b}" for m, b in sorted(MIN_DRIVER_BRANCH.items()))
