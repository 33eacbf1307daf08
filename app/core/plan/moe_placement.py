"""Where a mixture-of-experts model goes on a small card: every layer on the GPU, the experts of the first N layers
in RAM (llama-server ``--n-cpu-moe N``).

Attention, router and shared experts run on every token; each expert only for the tokens routed to it, so keeping
attention on the GPU and the experts of some layers in RAM is several times faster than offloading fewer whole
layers (the issue's report: gpt-oss-20B at 36 tok/s with ``--n-cpu-moe 12`` on an 8 GB card). The plan's answer here
seeds the probe, which proves it with real loads (app.core.probe.moe_search).
"""

from __future__ import annotations

from typing import Any

from app.core.launch.config import BACKEND_LLAMA_SERVER, LaunchConfig
from app.core.plan.budget import DeviceBudget, device_budgets
from app.core.plan.experts import expert_split
from app.core.plan.memory import fits_all
from app.core.plan.placement import Placement


def places_experts(info: Any, config: LaunchConfig) -> bool:
    """Whether experts can be kept in RAM apart from their layer: a model with experts on llama-server (the built-in
    engine ignores tensor overrides)."""
    return config.backend == BACKEND_LLAMA_SERVER and expert_split(info).is_moe


def fewest_experts_on_cpu(info: Any, config: LaunchConfig, ctx: int, budgets: list[DeviceBudget]) -> int | None:
    """With every layer on the GPU, the fewest leading layers whose experts must stay in RAM for the plan to fit
    (0: everything fits on the GPU); None when not even all experts in RAM fit."""
    n_layer = int(info.block_count)
    all_layers = n_layer + 1

    def fits(n_cpu_moe: int) -> bool:
        return fits_all(info, config.with_changes(n_cpu_moe=n_cpu_moe), all_layers, ctx, budgets)

    if not fits(n_layer):
        return None
    lo, hi = -1, n_layer  # lo: known not to fit (-1: none known), hi: known to fit; memory only falls as N grows
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid
    return hi


def suggested_placement(info: Any, config: LaunchConfig, hw: Any, *, vram_budget: int | None = None,
                        ram_budget: int | None = None, margins: Any = None) -> Placement | None:
    """The plan's expert placement for a model with experts on llama-server with a GPU (or a VRAM budget): every
    layer on the GPU and the fewest layers' experts in RAM; None for other models, engines, or when none fits."""
    if not places_experts(info, config):
        return None
    budgets = device_budgets(hw, vram_budget=vram_budget, ram_budget=ram_budget, margins=margins)
    if not any(b.kind == "gpu" for b in budgets):
        return None
    fewest = fewest_experts_on_cpu(info, config, config.ctx, budgets)
    n_layer = int(info.block_count)
    return None if fewest is None else Placement(n_layer, n_layer + 1, fewest)
