"""Which device holds which layer for a given ``-ngl``, the way llama.cpp assigns them (llama-model.cpp
``load_tensors``).

llama.cpp counts ``n_layer + 1`` layer slots: the repeating layers 0 .. n_layer - 1 and the output layer
(``output.weight``, ``output_norm.weight``) as slot ``n_layer``. ``-ngl N`` offloads the LAST N slots, so the
output layer goes first: slot ``il`` is on a GPU when ``il >= n_layer + 1 - N`` (since llama.cpp PR #18148,
December 2025; older builds offloaded the output layer only with ``N > n_layer``). The token embeddings (the
"input layer") always stay on the CPU. With several GPUs the offloaded slots are cut by the cumulative shares
of the GPUs (``-ts``, or each GPU's free memory by default): slot ``il`` goes to the first GPU whose cumulative
share is above ``(il - first) / N``, computed in 32-bit floats as llama.cpp does.
"""

from __future__ import annotations

import struct
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

CPU = -1  # device index used for "the CPU / system RAM"


def normalize_gpu_layers(gpu_layers: int, n_layer: int) -> int:
    """-1 (all) and anything above n_layer + 1 become n_layer + 1; negatives become all."""
    if gpu_layers < 0 or gpu_layers > n_layer + 1:
        return n_layer + 1
    return gpu_layers


@dataclass(frozen=True)
class LayerAssignment:
    n_layer: int
    gpu_layers: int  # normalized, 0 .. n_layer + 1
    layer_device: tuple[int, ...]  # device of each repeating layer: CPU or a GPU position 0..n_gpus-1
    output_device: int

    def layers_on(self, device: int) -> list[int]:
        return [i for i, d in enumerate(self.layer_device) if d == device]

    @property
    def offloaded_layers(self) -> int:
        return sum(1 for d in self.layer_device if d != CPU)

    @property
    def output_on_gpu(self) -> bool:
        return self.output_device != CPU


def _f32(value: float) -> float:
    """``value`` rounded to a C float, as llama.cpp holds the split points."""
    return struct.unpack("f", struct.pack("f", value))[0]


def split_points(shares: Sequence[float]) -> list[float]:
    """llama.cpp's split points: the cumulative shares, normalized to end at 1 (equal shares when all are 0)."""
    shares = [float(s) for s in shares] if any(float(s) > 0 for s in shares) else [1.0] * len(shares)
    points, total = [], 0.0
    for share in shares:
        total = _f32(total + _f32(share))
        points.append(total)
    return [_f32(point / total) for point in points]


def assign_layers(n_layer: int, gpu_layers: int, gpu_weights: Sequence[float] = (1.0,)) -> LayerAssignment:
    """Assign repeating layers and the output layer to CPU or GPUs (weights: each GPU's share, ``-ts`` or its
    free memory; a GPU with share 0 gets no layer)."""
    ngl = normalize_gpu_layers(gpu_layers, n_layer) if gpu_weights else 0
    first_gpu = max(n_layer + 1 - ngl, 0)
    active = min(ngl, n_layer + 1)
    splits = split_points(gpu_weights)

    def device_of(il: int) -> int:
        if il < first_gpu or (il - first_gpu) >= active:
            return CPU
        position = _f32(float(il - first_gpu) / active)
        return min(bisect_right(splits, position), len(splits) - 1)  # bisect_right is C++'s upper_bound

    return LayerAssignment(n_layer, ngl, tuple(device_of(i) for i in range(n_layer)), device_of(n_layer))


def slot_ranges(assignment: LayerAssignment, device: int) -> list[tuple[int, int]]:
    """The runs of layer slots (0 .. n_layer, the output layer last) ``device`` holds, as (first, last) pairs."""
    devices = list(assignment.layer_device) + [assignment.output_device]
    ranges: list[tuple[int, int]] = []
    for slot, holder in enumerate(devices):
        if holder != device:
            continue
        if ranges and ranges[-1][1] == slot - 1:
            ranges[-1] = (ranges[-1][0], slot)
        else:
            ranges.append((slot, slot))
    return ranges


def is_output_tensor(name: str) -> bool:
    return name.startswith("output.") or name.startswith("output_norm.")


def weights_by_device(info: Any, assignment: LayerAssignment, *, sparse_input: bool = False) -> dict[int, int]:
    """Bytes of weights each device holds: actual per-layer tensor bytes from the file.

    ``sparse_input``: the token embeddings are memory-mapped and only the rows of tokens actually used
    are ever read, so they take (almost) no RAM; not so when they double as the output matrix.
    """
    result: dict[int, int] = {CPU: 0}
    for il, size in enumerate(info.layer_bytes[: assignment.n_layer]):
        device = assignment.layer_device[il]
        result[device] = result.get(device, 0) + int(size)
    non_layer = dict(info.non_layer_bytes)
    output_bytes = sum(int(v) for k, v in non_layer.items() if is_output_tensor(k))
    input_bytes = sum(int(v) for k, v in non_layer.items() if not is_output_tensor(k))
    tied = "output.weight" not in non_layer
    if tied and assignment.output_on_gpu:
        # tied embeddings: llama.cpp loads token_embd a second time as the output matrix on the GPU
        output_bytes += int(non_layer.get("token_embd.weight", 0))
    if sparse_input and not (tied and not assignment.output_on_gpu):
        input_bytes -= int(non_layer.get("token_embd.weight", 0))
    result[CPU] += input_bytes
    result[assignment.output_device] = result.get(assignment.output_device, 0) + output_bytes
    return result
