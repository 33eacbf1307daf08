"""Several GPUs: a proposed ``--tensor-split`` and the sentence that says how the layers are split.

Each card's share as llama.cpp reads it is ``budget.gpu_shares``; GPUs are in CUDA order, the order of the
plan's budgets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.core.launch.config import LaunchConfig
from app.core.plan.budget import DeviceBudget, gpu_shares
from app.core.plan.estimate import estimate_devices
from app.core.plan.layers import CPU, LayerAssignment, assign_layers, slot_ranges, weights_by_device
from app.core.plan.projector import config_projector_bytes
from app.core.text import T, Text

GiB = 1024**3


def propose_tensor_split(info: Any, config: LaunchConfig, budgets: Sequence[DeviceBudget]) -> tuple[float, ...]:
    """A tensor split for the GPUs present (in CUDA order): each card's room for layers in GiB (0.1 steps), that
    is its free memory minus its safety margin, CUDA context and compute buffer; minus the vision projector on
    the first card and the output layer on the last one (the slot llama.cpp gives the last card). () with fewer
    than two GPUs or no room on any."""
    gpus = [b for b in budgets if b.kind == "gpu"]
    if len(gpus) < 2:
        return ()
    even = config.with_changes(tensor_split=(1.0,) * len(gpus), split_mode="layer")
    plans = [p for p in estimate_devices(info, even, -1, config.ctx, budgets)[1] if p.budget.kind == "gpu"]
    rooms = [p.budget.free_bytes - p.budget.keep_bytes - p.overhead_bytes - p.compute_bytes for p in plans]
    rooms[0] -= config_projector_bytes(config)
    rooms[-1] -= weights_by_device(info, assign_layers(int(info.block_count), 1)).get(0, 0)
    shares = tuple(round(max(room, 0) / GiB, 1) for room in rooms)
    return shares if any(shares) else ()


def _range_text(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}–{last}"


def split_sentence(assignment: LayerAssignment, gpus: Sequence[DeviceBudget]) -> Text | None:
    """"Layers 0–15 on GPU 0 (NVIDIA GeForce RTX 3060), 16–32 on GPU 1 (…)." for two GPUs or more; None else.

    Layers are llama.cpp's slots, the output layer last, as in "33 of 33 layers"."""
    if len(gpus) < 2:
        return None
    parts: list[tuple[int, int, str, str]] = []
    for position, budget in [(CPU, None), *enumerate(gpus)]:
        en_place = "the processor" if budget is None else f"{budget.label} ({budget.name})"
        zh_place = "处理器" if budget is None else f" {budget.label}（{budget.name}）"  # a space before Latin
        for first, last in slot_ranges(assignment, position):
            span = _range_text(first, last)
            parts.append((first, last, f"{span} on {en_place}", f"第 {span} 层在{zh_place}上"))
    parts.sort()
    lead = "Layer " if parts[0][0] == parts[0][1] else "Layers "
    return T(lead + ", ".join(p[2] for p in parts) + ".", "，".join(p[3] for p in parts) + "。")


def split_notes(config: LaunchConfig, n_layer: int, gpu_layers: int,
                gpus: Sequence[DeviceBudget]) -> tuple[Text, ...]:
    """The plan's notes about several GPUs: how ``gpu_layers`` are split, or that the chosen GPU is missing."""
    if config.split_mode == "none" and gpus and config.main_gpu >= len(gpus):
        return (T("The graphics card chosen for the model (GPU {n}) is not in this computer; it has {count}.",
                  "为模型选择的显卡（GPU {n}）不在这台电脑上；这台电脑有 {count} 块显卡。",
                  n=config.main_gpu, count=len(gpus)),)
    sentence = split_sentence(assign_layers(n_layer, gpu_layers, gpu_shares(config, gpus)), gpus)
    return (sentence,) if sentence is not None else ()
