"""Which NVML GPU is CUDA device n: matched by UUID, never assumed from the index.

NVML (the Machine step, the memory plan) numbers GPUs by PCI bus; CUDA, and so llama.cpp's ``--main-gpu`` and
``--tensor-split``, numbers them fastest first unless ``CUDA_DEVICE_ORDER=PCI_BUS_ID``, and
``CUDA_VISIBLE_DEVICES`` hides or reorders them. The app starts its servers with the order pinned to the PCI bus
(app.core.process.child), so :func:`cuda_order` predicts CUDA's list from NVML's; where a server's log lists
its devices (``Device 0: NVIDIA GeForce RTX 3060, compute capability 8.6, VMM: yes, VRAM: 12287 MiB``; no build
prints a UUID there), :func:`cuda_uuids` checks the prediction against those lines by name and memory.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from app.core.hardware.gpu import GpuInfo

MiB = 1024 * 1024
# CUDA's totalGlobalMem and NVML's memory total of one card differ by a few MiB
VRAM_TOLERANCE = 0.02
_DEVICE_LINE = re.compile(r"\bDevice (\d+): (.+?), compute capability [\d.]+, VMM: \w+(?:, VRAM: (\d+) MiB)?")


@dataclass(frozen=True)
class CudaDevice:
    """One ``Device n:`` line of ggml's CUDA start-up log."""

    index: int
    name: str
    vram_mib: int | None  # older builds do not print it


def parse_cuda_devices(lines: Iterable[str]) -> list[CudaDevice]:
    """The CUDA devices a llama.cpp log lists, in CUDA order (the first listing only, if it started twice)."""
    found: dict[int, CudaDevice] = {}
    for line in lines:
        match = _DEVICE_LINE.search(line)
        if match and int(match.group(1)) not in found:
            vram = match.group(3)
            found[int(match.group(1))] = CudaDevice(int(match.group(1)), match.group(2), int(vram) if vram else None)
    return [found[i] for i in sorted(found)]


def pci_order(gpus: Sequence[GpuInfo]) -> list[GpuInfo]:
    """GPUs by PCI bus id (CUDA's order when pinned); GPUs NVML gave no bus id keep NVML's order, last."""
    def key(gpu: GpuInfo) -> tuple[bool, str, int]:
        bus = getattr(gpu, "pci_bus_id", None)  # a simulated GPU may have none
        return bus is None, bus or "", int(gpu.index)

    return sorted(gpus, key=key)


def cuda_order(gpus: Sequence[GpuInfo], env: Mapping[str, str] | None = None) -> list[GpuInfo]:
    """The GPUs as a child the app starts numbers them: PCI order, then ``CUDA_VISIBLE_DEVICES`` applied."""
    env = os.environ if env is None else env
    ordered = pci_order(gpus)
    visible = env.get("CUDA_VISIBLE_DEVICES")
    return ordered if visible is None else _visible(ordered, visible)


def _visible(ordered: list[GpuInfo], visible: str) -> list[GpuInfo]:
    """CUDA's reading of CUDA_VISIBLE_DEVICES: indices or UUID prefixes, up to the first entry that names none."""
    chosen: list[GpuInfo] = []
    for entry in (e.strip() for e in visible.split(",")):
        gpu = _named(ordered, entry)
        if gpu is None:
            break
        if gpu not in chosen:
            chosen.append(gpu)
    return chosen


def _named(ordered: list[GpuInfo], entry: str) -> GpuInfo | None:
    if entry.isdigit():
        return ordered[int(entry)] if int(entry) < len(ordered) else None
    if entry.upper().startswith("GPU-"):
        matches = [g for g in ordered if (g.uuid or "").lower().startswith(entry.lower())]
        return matches[0] if len(matches) == 1 else None
    return None  # a MIG instance, -1 or garbage: CUDA stops reading here


def _same_card(device: CudaDevice, gpu: GpuInfo) -> bool:
    if device.name.strip() != gpu.name.strip():
        return False
    if device.vram_mib is None or not gpu.vram_total_bytes:
        return True
    total_mib = gpu.vram_total_bytes / MiB
    return abs(device.vram_mib - total_mib) <= VRAM_TOLERANCE * total_mib


def cuda_uuids(gpus: Sequence[GpuInfo], *, env: Mapping[str, str] | None = None,
               log_lines: Iterable[str] = ()) -> list[str | None]:
    """The UUID of CUDA device 0, 1, ...: the predicted order, checked against a log's device lines when given.

    A listed device that is not the predicted card (an unpinned, fastest-first order) takes the first unused
    card with its name and memory, in PCI order; None where no card fits (a GPU NVML does not see)."""
    expected = cuda_order(gpus, env)
    listed = parse_cuda_devices(log_lines)
    if not listed:
        return [g.uuid for g in expected]
    unused = list(expected) + [g for g in pci_order(gpus) if g not in expected]
    result: list[str | None] = []
    for position, device in enumerate(listed):
        predicted = expected[position] if position < len(expected) else None
        gpu = predicted if predicted in unused and _same_card(device, predicted) else next(
            (g for g in unused if _same_card(device, g)), None)
        if gpu is not None:
            unused.remove(gpu)
        result.append(gpu.uuid if gpu is not None else None)
    return result


def gpu_by_uuid(gpus: Iterable[GpuInfo], uuid: str | None) -> GpuInfo | None:
    """The GPU with this UUID in a fresh reading (``read_gpus()``): how a device's VRAM is read, by UUID."""
    return next((g for g in gpus if uuid is not None and g.uuid == uuid), None)
