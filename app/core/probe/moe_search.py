"""The probe's search for a model with experts: every layer on the GPU, and the fewest leading layers whose experts
stay in RAM (llama-server ``--n-cpu-moe N``) that really load and answer; then the fastest of the passing
placements.

The fewest layers in RAM is not always the fastest: a card filled to its last megabytes can be slower (a driver that
spills into system memory, a smaller compute buffer), so the next placement (one more layer's experts in RAM) is
measured too and the measured generation speeds decide. A difference within the noise of one short request keeps the
placement with more on the GPU.
"""

from __future__ import annotations

from collections.abc import Callable

from app.core.probe.attempt import Attempt
from app.core.probe.result import Recommendation
from app.core.probe.search import search_highest

SPEED_NOISE = 0.05  # a placement must be this much faster to win over one with more on the GPU
SPEED_CANDIDATES = 2  # passing placements whose speeds are compared (the fewest in RAM, and the next one)

RunAttempt = Callable[..., bool]  # (phase, gpu_layers, ctx, n_cpu_moe) -> passed


def fewest_in_ram(run: RunAttempt, n_layer: int, ctx: int, seed: int | None) -> int | None:
    """The fewest leading layers whose experts must stay in RAM with every layer on the GPU (real loads); None when
    not even all experts in RAM pass. Index i stands for ``n_layer - i`` layers in RAM, so "highest passing index"
    is "fewest in RAM"."""
    all_layers = n_layer + 1
    index_seed = None if seed is None else n_layer - min(max(int(seed), 0), n_layer)
    result = search_highest(n_layer + 1, lambda i: run("experts", all_layers, ctx, n_layer - i), seed=index_seed)
    return None if result.best is None else n_layer - result.best


def _best_speed(attempts: list[Attempt], gpu_layers: int, ctx: int, n_cpu_moe: int) -> float | None:
    """The fastest generation speed the passing loads of one placement measured (None: none measured)."""
    speeds = [a.generation_tps for a in attempts if a.ok and a.generation_tps
              and (a.gpu_layers, a.ctx, a.n_cpu_moe) == (gpu_layers, ctx, n_cpu_moe)]
    return max(speeds) if speeds else None


def fastest_placement(run: RunAttempt, attempts: list[Attempt], n_layer: int, ctx: int, fewest: int) -> int:
    """Measure the next placement too (one more layer's experts in RAM) and return the ``n_cpu_moe`` of the fastest
    passing one; the fewest in RAM unless another is clearly faster."""
    all_layers = n_layer + 1
    candidates = [fewest]
    for n_cpu_moe in range(fewest + 1, min(fewest + SPEED_CANDIDATES, n_layer + 1)):
        passed = _best_speed(attempts, all_layers, ctx, n_cpu_moe) is not None or run("speed", all_layers, ctx,
                                                                                       n_cpu_moe)
        if passed:
            candidates.append(n_cpu_moe)
    best, best_speed = fewest, _best_speed(attempts, all_layers, ctx, fewest)
    for n_cpu_moe in candidates[1:]:
        speed = _best_speed(attempts, all_layers, ctx, n_cpu_moe)
        if speed is not None and (best_speed is None or speed > best_speed * (1 + SPEED_NOISE)):
            best, best_speed = n_cpu_moe, speed
    return best


def expert_recommendation(run: RunAttempt, attempts: list[Attempt], n_layer: int, ctx: int,
                          seed: int | None) -> Recommendation | None:
    """Every layer on the GPU with the fastest passing expert placement; None when even all experts in RAM fail."""
    fewest = fewest_in_ram(run, n_layer, ctx, seed)
    if fewest is None:
        return None
    return Recommendation(gpu_layers=n_layer + 1, ctx=ctx,
                          n_cpu_moe=fastest_placement(run, attempts, n_layer, ctx, fewest))
