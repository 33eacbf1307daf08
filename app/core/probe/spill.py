"""The spill rule: on Windows an NVIDIA driver that runs out of graphics memory does not fail the load; it moves part
of it into shared system memory ("sysmem fallback"), the load passes, the VRAM reading stays within the card, and only
the speed shows it (issue 28).

Field reports of what that costs: throughput "collapses by roughly an order of magnitude" with no CUDA error and no
log line (AtomicBot-ai/atomic-llama-cpp-turboquant#77, Windows, llama-server, 2026-09); 70B models at 1.5 tokens/s
with every layer squeezed onto two cards through "Shared GPU Memory" (ggml-org/llama.cpp#4498); a model mostly in
`CUDA_Host` memory read over PCIe runs far below the VRAM/RAM split (ollama/ollama#16873, #7584). The other way round
is monotonic: fewer layers on the GPU is slower, never faster (ollama/ollama#14258: 33/33 layers 105.8 tokens/s,
24/33 31.9, 4/33 12.1; ollama/ollama#10092: slowest all in RAM, fastest all in VRAM).

So a candidate with more on the GPU spilled when it generates a quarter slower than a measurement with less on the GPU
(same or smaller context: :data:`DIP_RATIO`) and below :data:`SPILL_RATIO` of what those measurements lead one to
expect (the fastest of them, or the straight line through them: expected_tps): it counts as failed, and the search
steps down as it does for an out-of-memory failure. A half is far from both sides: a spill costs several-fold to
tenfold, while one short test request's noise on a busy machine stays well within it (the expert search treats 5 % as
noise, moe_search.py). Both speeds must come from at least :data:`MIN_GENERATED_TOKENS` generated tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.plan.placement import Placement
from app.core.text import T, Text

if TYPE_CHECKING:
    from app.core.hardware.report import HardwareReport
    from app.core.probe.attempt import Attempt

SPILL_CAUSE = "gpu_spilled"
SPILL_PHASE = "spill"  # the probe's phase for a reference load measured only to judge a spill
SPILL_RATIO = 0.5  # below half the speed expected from loads with less on the GPU (reports: several-fold to ~10x)
# and in any case a quarter slower than a load with less on the GPU: with noise of up to ~30 % on one short request,
# a line through two noisy references alone can promise too much
DIP_RATIO = 0.75
MIN_GENERATED_TOKENS = 8  # fewer generated tokens make a speed too noisy to judge (the test request asks for 16)


def spill_possible(hw: HardwareReport | None) -> bool:
    """Only an NVIDIA card on Windows spills instead of failing (hw.gpus holds the cards NVML found)."""
    return hw is not None and hw.os_name == "Windows" and bool(hw.gpus)


def _measured(attempt: Attempt) -> float | None:
    """The attempt's generation speed when it passed and enough tokens back it."""
    if not attempt.ok or not attempt.generation_tps or (attempt.generated_tokens or 0) < MIN_GENERATED_TOKENS:
        return None
    return attempt.generation_tps


def _less_on_gpu(other: Attempt, candidate: Attempt) -> bool:
    """``other`` kept less of the model on the GPU (and no more context): it should not be much faster."""
    return (other.gpu_layers <= candidate.gpu_layers and other.n_cpu_moe >= candidate.n_cpu_moe
            and other.ctx <= candidate.ctx
            and (other.gpu_layers, other.n_cpu_moe) != (candidate.gpu_layers, candidate.n_cpu_moe))


def reference(candidate: Attempt, earlier: list[Attempt]) -> Attempt | None:
    """The fastest earlier passing attempt with less on the GPU (None: nothing to compare with)."""
    comparable = [a for a in earlier if _less_on_gpu(a, candidate) and _measured(a) is not None]
    return max(comparable, key=lambda a: _measured(a) or 0.0, default=None)


@dataclass(frozen=True)
class Collapse:
    """A spill seen: the fastest reference with less on the GPU, and the speed the references lead one to expect."""

    reference: Attempt
    expected_tps: float


def _per_layer_refs(candidate: Attempt, earlier: list[Attempt]) -> list[tuple[int, float]]:
    """(GPU layers, best speed) of passing attempts with fewer layers, the same experts in RAM and no more context."""
    best: dict[int, float] = {}
    for a in earlier:
        speed = _measured(a)
        if speed is not None and _less_on_gpu(a, candidate) and a.n_cpu_moe == candidate.n_cpu_moe:
            best[a.gpu_layers] = max(best.get(a.gpu_layers, 0.0), speed)
    return sorted(best.items())


def expected_tps(candidate: Attempt, earlier: list[Attempt], floor: float) -> float:
    """What the candidate should generate at least: a token's time is the bytes each device reads over its bandwidth,
    so it falls in a straight line as layers move to the GPU (ollama/ollama#14258: 4, 24, 33 of 33 layers took 82.6,
    31.3 and 9.45 ms a token). The line through the references with the fewest and the most layers, extended to the
    candidate; ``floor`` (the fastest reference) when there is no line or it breaks down."""
    refs = _per_layer_refs(candidate, earlier)
    if len(refs) < 2:
        return floor
    (low_layers, low_tps), (high_layers, high_tps) = refs[0], refs[-1]  # the widest base: noise tilts it least
    slope = min((1 / high_tps - 1 / low_tps) / (high_layers - low_layers), 0.0)  # seconds a token, per layer
    seconds = 1 / high_tps + slope * (candidate.gpu_layers - high_layers)
    return max(1 / seconds, floor) if seconds > 0 else floor


def spilled(candidate: Attempt, earlier: list[Attempt]) -> Collapse | None:
    """The collapse ``candidate`` shows, when it does (None: no spill seen): below :data:`DIP_RATIO` of a measurement
    with less on the GPU, and below :data:`SPILL_RATIO` of what the references lead one to expect."""
    speed = _measured(candidate)
    if speed is None or candidate.gpu_layers <= 0:
        return None
    ref = reference(candidate, earlier)
    ref_speed = None if ref is None else _measured(ref)
    if ref is None or ref_speed is None or speed >= DIP_RATIO * ref_speed:
        return None
    expected = expected_tps(candidate, earlier, ref_speed)
    return Collapse(ref, expected) if speed < SPILL_RATIO * expected else None


def spill_reason(candidate: Attempt, collapse: Collapse, n_layer: int) -> Text:
    """The sentence, with the speeds and both placements as its evidence."""
    ref = collapse.reference
    where = Placement(n_layer, candidate.gpu_layers, candidate.n_cpu_moe).describe()
    ref_where = Placement(n_layer, ref.gpu_layers, ref.n_cpu_moe).describe()
    if collapse.expected_tps > (ref.generation_tps or 0.0) * 1.05:
        expected = T(", where the loads with fewer layers lead one to expect about {tps} tokens/s",
                     "，按层数更少的几次加载推算应约为每秒 {tps} 个", tps=f"{collapse.expected_tps:.1f}")
    else:
        expected = T("", "")
    return T("The model spilled into shared memory: with {where} it generated {slow} tokens/s, against {fast} "
             "tokens/s with {ref_where}{expected}; more on the GPU is never that much slower, so the graphics driver "
             "kept part of it in system memory. Fewer GPU layers are tried.",
             "模型溢出到了共享内存：{where_zh}时每秒生成 {slow} 个词元，而{ref_where_zh}时每秒 {fast} 个{expected_zh}；"
             "放到 GPU 上的越多不会慢这么多，说明显卡驱动把一部分放进了系统内存。接下来试更少的 GPU 层。",
             where=where.render("en"), where_zh=where.render("zh"), ref_where=ref_where.render("en"),
             ref_where_zh=ref_where.render("zh"), slow=f"{candidate.generation_tps:.1f}",
             fast=f"{ref.generation_tps:.1f}", expected=expected.render("en"), expected_zh=expected.render("zh"))


def judge_spill(candidate: Attempt, earlier: list[Attempt], n_layer: int) -> bool:
    """Mark a passing ``candidate`` that collapsed against ``earlier`` as failed; True when it did."""
    collapse = spilled(candidate, earlier)
    if collapse is None:
        return False
    candidate.ok, candidate.cause, candidate.reason = False, SPILL_CAUSE, spill_reason(candidate, collapse, n_layer)
    return True


def needs_anchor(candidate: Attempt, earlier: list[Attempt]) -> bool:
    """Nothing to judge ``candidate`` by: no passing measurement with less on the GPU, nor one with more (which would
    already have shown a spill above it)."""
    if candidate.gpu_layers < 2 or reference(candidate, earlier) is not None:
        return False
    return not any(a.ok and _less_on_gpu(candidate, a) for a in earlier)


def second_reference_layers(candidate: Attempt, earlier: list[Attempt]) -> int | None:
    """Where to measure a second reference when the one there is clearly faster than the candidate (more layers
    slower than fewer: a spill, or much noise) but not twice as fast: half its layers, so a line through the two says
    what the candidate should reach. None when the rule can already decide."""
    speed = _measured(candidate)
    ref = reference(candidate, earlier)
    ref_speed = None if ref is None else _measured(ref)
    if speed is None or ref is None or ref_speed is None:
        return None
    if not SPILL_RATIO * ref_speed <= speed < DIP_RATIO * ref_speed:
        return None
    if len(_per_layer_refs(candidate, earlier)) >= 2 or ref.n_cpu_moe != candidate.n_cpu_moe or ref.gpu_layers < 2:
        return None
    return ref.gpu_layers // 2


def anchor_layers(candidate: Attempt) -> int:
    """Where to measure a reference for a candidate that has none: three quarters of its GPU layers. Close enough
    that it is clearly faster than a spilled candidate (fewer layers are slower: a half of them can be little faster
    than a spilled card, ollama/ollama#14258), far enough below that a plan a little too hopeful does not spill it
    too."""
    return candidate.gpu_layers * 3 // 4
