"""The live probe: prove the safest fast settings with real loads, seeded by the memory plan.

GPU machines: search the highest ``gpu_layers`` in [0, n_layer + 1] at the requested ctx; if even 0
layers fails, search the context at 0 layers. A model with experts on llama-server first keeps every layer on the
GPU and searches the fewest layers whose experts stay in RAM, then compares the measured speeds of the passing
placements (moe_search.py); only when not even every expert in RAM fits does it offload fewer layers.
CPU-only machines: search the largest ctx (multiples
of 256, up to the requested ctx) that passes. ``ProbeOptions(max_context=True)`` ("as much context as fits")
searches the context up to the model's training length instead (on a GPU: at the layers found). Every attempt is a
real server child (see attempt.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from app.core.launch.backends import EMBEDDED_NO_CPU_MOE
from app.core.launch.config import LaunchConfig
from app.core.launch.gpu_servers import has_gpu_backend
from app.core.plan.budget import Margins, device_budgets
from app.core.plan.experts import expert_split
from app.core.plan.kv import KV_CELL_PADDING
from app.core.plan.memory import highest_fitting_layers, make_plan
from app.core.plan.moe_placement import fewest_experts_on_cpu, places_experts
from app.core.plan.placement import Placement
from app.core.probe import cache
from app.core.probe.attempt import Attempt, AttemptLimits, ProbeCancelled, is_cancelled, run_attempt
from app.core.probe.fit_seed import FitAnswer, ask_fit, fit_targets_mib
from app.core.probe.full_context import FullContextProjector
from app.core.probe.moe_search import expert_recommendation
from app.core.probe.result import ProbeProgress, ProbeResult, Recommendation, result_from_cache
from app.core.probe.search import max_loads, search_highest
from app.core.probe.spill import (
    SPILL_PHASE,
    anchor_layers,
    judge_spill,
    needs_anchor,
    second_reference_layers,
    spill_possible,
)
from app.core.problem import UserError
from app.core.rpc.worker import uses_workers
from app.core.text import T, Text

# failures that say nothing about the candidate settings: tried once more before they count
TRANSIENT_CAUSES = frozenset({"port_in_use", "host_unavailable", "request", "failed", "stopped_externally"})
if TYPE_CHECKING:
    from app.core.gguf.model_info import ModelInfo
    from app.core.hardware.report import HardwareReport
    from app.core.launch.backends import BackendInfo
    from app.core.plan.memory import MemoryPlan

Cancel = Any  # a zero-argument callable that returns True once cancelled, or a threading.Event (is_cancelled)
AttemptRunner = Callable[[LaunchConfig, AttemptLimits, Cancel], Attempt]


@dataclass(frozen=True)
class ProbeOptions:
    """How to judge and run the test loads; the defaults are what the window and ``gguf-launcher probe`` use.

    Every field but ``use_cache`` and ``load_timeout_s`` is part of the cache key: a different budget is a
    different question.
    """

    ram_budget: int | None = None  # judge RAM against this instead of what the machine has free
    vram_budget: int | None = None  # judge VRAM against this (e.g. "an 8 GB card" on a bigger one)
    margins: Margins = field(default_factory=Margins)
    rlimits: dict[int, int] | None = None  # hard caps applied to each test child
    load_timeout_s: float = 600.0
    use_cache: bool = True
    seeded: bool = True  # False ignores the plan's estimate as the search seed (benchmarks)
    max_context: bool = False  # "as much context as fits": search the context up to the model's training length


def _uses_gpu(hw: HardwareReport | None, backend: BackendInfo) -> bool:
    return bool(getattr(hw, "gpus", None)) and has_gpu_backend(getattr(backend, "compiled_backends", ()))


class _Prober:
    """Runs attempts for the searches, retrying a transient failure (busy port, broken request) once."""

    def __init__(self, config, limits, progress, cancel, runner: AttemptRunner, budget: int, n_layer: int,
                 spill_watch: bool = False) -> None:
        self.config, self.limits, self.progress, self.cancel = config, limits, progress, cancel
        self.runner, self.n_layer = runner, n_layer
        self.spill_watch = spill_watch  # the card may spill into shared memory instead of failing (spill.py)
        self.attempts: list[Attempt] = []
        self.failed: set[tuple[int, int, int]] = set()  # settings that already failed: never loaded twice
        self.budget = budget  # announced upper bound on attempts (grows when needed)

    def _announce(self, phase: str, layers: int, ctx: int, n_cpu_moe: int, last: Attempt | None) -> None:
        if self.progress is None:
            return
        number = len(self.attempts) + 1
        self.budget = max(self.budget, number)
        if n_cpu_moe > 0:
            where = Placement(self.n_layer, layers, n_cpu_moe).describe()
            message = T("Test load {i} of at most {n}: {where}, {ctx} tokens of context…",
                        "第 {i} 次测试加载（最多 {n} 次）：{where_zh}，上下文 {ctx} 个词元…",
                        i=number, n=self.budget, where=where.render("en"), where_zh=where.render("zh"), ctx=ctx)
        else:
            message = T("Test load {i} of at most {n}: {layers} GPU layers, {ctx} tokens of context…",
                        "第 {i} 次测试加载（最多 {n} 次）：{layers} 层放到 GPU，上下文 {ctx} 个词元…",
                        i=number, n=self.budget, layers=layers, ctx=ctx)
        self.progress(ProbeProgress(number, self.budget, phase, layers, ctx, message, last))

    def run(self, phase: str, gpu_layers: int, ctx: int, n_cpu_moe: int | None = None) -> bool:
        """One candidate (``n_cpu_moe`` None: the config's own); a failure not about memory is tried once more."""
        n_cpu_moe = self.config.n_cpu_moe if n_cpu_moe is None else n_cpu_moe
        settings = (gpu_layers, ctx, n_cpu_moe)
        if settings in self.failed:  # e.g. the ctx search's top at 0 layers, after the layer search
            return False
        for _try in range(2):
            if is_cancelled(self.cancel):
                raise ProbeCancelled()
            self._announce(phase, gpu_layers, ctx, n_cpu_moe, self.attempts[-1] if self.attempts else None)
            if is_cancelled(self.cancel):
                raise ProbeCancelled()
            candidate = self.config.with_changes(gpu_layers=gpu_layers, ctx=ctx, n_cpu_moe=n_cpu_moe)
            attempt = self.runner(candidate, self.limits, self.cancel)
            self.attempts.append(attempt)
            if attempt.ok and self.spill_watch:
                self._judge_spill(phase, attempt)
            if attempt.ok or attempt.memory_related:
                if not attempt.ok:
                    self.failed.add(settings)
                return attempt.ok
            if attempt.diagnosis is not None and not attempt.diagnosis.restartable:
                raise UserError(attempt.reason or T("The server cannot start.", "服务器无法启动。"),
                                attempt.diagnosis.next_step, attempt.diagnosis.evidence)
            if attempt.cause not in TRANSIENT_CAUSES:
                self.failed.add(settings)
                return False  # a crash at these settings: too much for this machine
        return False

    def _judge_spill(self, phase: str, attempt: Attempt) -> None:
        """Fail a passing candidate whose generation speed collapsed against one with less on the GPU; when none was
        measured yet, measure one first (spill.anchor_layers), so a first candidate that already spills is caught
        too; when the one reference is faster but not twice as fast, a second one gives the line the candidate is
        judged by (spill.second_reference_layers)."""
        earlier = self.attempts[:-1]
        if phase != SPILL_PHASE and needs_anchor(attempt, earlier):
            self.run(SPILL_PHASE, anchor_layers(attempt), attempt.ctx, attempt.n_cpu_moe)
            earlier = [a for a in self.attempts if a is not attempt]
        second = second_reference_layers(attempt, earlier) if phase != SPILL_PHASE else None
        if second is not None:
            self.run(SPILL_PHASE, second, attempt.ctx, attempt.n_cpu_moe)
            earlier = [a for a in self.attempts if a is not attempt]
        judge_spill(attempt, earlier, self.n_layer)


def _layer_search(prober: _Prober, n_layer: int, ctx: int, seed: int | None,
                  n_cpu_moe: int | None = None) -> int | None:
    result = search_highest(n_layer + 2, lambda i: prober.run("layers", i, ctx, n_cpu_moe), seed=seed)
    return result.best


def _ctx_steps(max_ctx: int) -> int:
    return max(-(-max_ctx // KV_CELL_PADDING), 1)


def _ctx_search(prober: _Prober, gpu_layers: int, max_ctx: int, seed_ctx: int | None,
                n_cpu_moe: int | None = None) -> int | None:
    """Multiples of 256, the last one being the requested ctx itself (never more than was asked)."""
    def ctx_at(index: int) -> int:
        return min((index + 1) * KV_CELL_PADDING, max_ctx)

    seed = None if seed_ctx is None else max(seed_ctx // KV_CELL_PADDING - 1, 0)
    result = search_highest(_ctx_steps(max_ctx), lambda i: prober.run("ctx", gpu_layers, ctx_at(i), n_cpu_moe),
                            seed=seed)
    return None if result.best is None else ctx_at(result.best)


def _cache_still_valid(stored: dict[str, Any], hw: HardwareReport | None) -> bool:
    """Re-run when the GPUs now have less free VRAM than the passing attempt used."""
    gpus = getattr(hw, "gpus", None) or []
    recommendation = stored.get("recommendation")
    if not gpus or not recommendation:
        return True
    used = max((a.get("peak_vram_bytes") or 0 for a in stored.get("attempts", [])
                if a.get("ok") and a.get("gpu_layers") == recommendation.get("gpu_layers")), default=0)
    return sum(int(g.vram_free_bytes or 0) for g in gpus) >= used


def run_probe(info: ModelInfo, config: LaunchConfig, hw: HardwareReport | None, options: ProbeOptions | None = None,
              *, progress: Callable[[ProbeProgress], None] | None = None, cancel: Cancel = None,
              backend: BackendInfo | None = None, plan: MemoryPlan | None = None,
              runner: AttemptRunner | None = None, fit: FitAnswer | None = None) -> ProbeResult:
    """Find the highest GPU layers and ctx that really load and answer; see the module doc.

    ``backend`` is the engine already looked up for ``config`` and ``plan`` the memory plan already made for
    ``config`` and ``hw`` (the window's model session has both): each is made here when None (``plan`` also when
    the options judge other budgets or margins than the plan did). Every test load uses ``backend``. ``runner``
    replaces the real attempt (simulations); ``fit`` replaces llama.cpp's dry run (asked only for real attempts).
    """
    from app.core.launch.backends import resolve_backend

    started = time.monotonic()
    options = options or ProbeOptions()
    backend = backend or resolve_backend(config)
    if plan is None or not _default_budgets(options):
        plan = make_plan(info, config, hw, vram_budget=options.vram_budget, ram_budget=options.ram_budget,
                         margins=options.margins)
    experts = expert_seeds(info, config, hw, options)
    keyed = config.with_changes(n_cpu_moe=0) if experts is not None else config  # the probe chooses it then
    key = cache.probe_key(info, keyed, backend, hw, ram_budget=options.ram_budget, vram_budget=options.vram_budget,
                          margins=options.margins.to_dict(),
                          rlimits={str(k): v for k, v in (options.rlimits or {}).items()},
                          **({"max_context": True} if options.max_context else {}))
    if options.use_cache:
        stored = cache.load_cached(key)
        if stored is not None and _cache_still_valid(stored, hw):
            result = result_from_cache(stored, plan)
            result.wall_seconds = time.monotonic() - started
            return result
    limits = AttemptLimits(load_timeout_s=options.load_timeout_s, margins=options.margins,
                           ram_budget=options.ram_budget, vram_budget=options.vram_budget, rlimits=options.rlimits,
                           full_context=FullContextProjector.from_plan(info, plan))
    if fit is None and runner is None:
        fit = _ask_fit(info, config, hw, backend, options)
    result = _search(info, config, hw, plan, backend, limits, progress, cancel, runner or _default_runner(backend),
                     options.seeded, context_ceiling(info, config) if options.max_context else None, experts, fit)
    result.wall_seconds = time.monotonic() - started
    cache.save_result(key, result)
    return result


def _ask_fit(info: ModelInfo, config: LaunchConfig, hw: HardwareReport | None, backend: BackendInfo,
             options: ProbeOptions) -> FitAnswer | None:
    """llama.cpp's own dry run, where a GPU is used and the llama-server build has the tool (fit_seed.py)."""
    if not _uses_gpu(hw, backend):
        return None
    return ask_fit(info, config, backend.path, fit_targets_mib(hw, options.margins, options.vram_budget))


def _default_budgets(options: ProbeOptions) -> bool:
    """True when the options judge what the window's plan judged: the machine's own memory, default margins."""
    return options.vram_budget is None and options.ram_budget is None and options.margins == Margins()


def _default_runner(backend: BackendInfo) -> AttemptRunner:
    """Real test loads, each a server of ``backend`` (looked up once, for the whole probe)."""
    def run(config: LaunchConfig, limits: AttemptLimits, cancel: Cancel) -> Attempt:
        return run_attempt(config, limits, cancel=cancel, backend=backend)
    return run


def context_ceiling(info: ModelInfo, config: LaunchConfig) -> int:
    """The most context "as much context as fits" searches: what the model was trained for (at least the
    requested ctx; the requested ctx when the file does not say)."""
    return max(int(info.context_length or 0), int(config.ctx))


@dataclass(frozen=True)
class ExpertSeeds:
    """The plan's answers for a model with experts on llama-server: the fewest leading layers whose experts stay in
    RAM with every layer on the GPU, and the most layers with every expert in RAM (None: the plan sees no fit)."""

    fewest_in_ram: int | None
    layers_all_in_ram: int | None


def expert_seeds(info: ModelInfo, config: LaunchConfig, hw: HardwareReport | None,
                 options: ProbeOptions) -> ExpertSeeds | None:
    """None for a model without experts, or an engine that cannot place them."""
    if not places_experts(info, config) or info.block_count is None:
        return None
    budgets = device_budgets(hw, vram_budget=options.vram_budget, ram_budget=options.ram_budget,
                             margins=options.margins)
    all_in_ram = config.with_changes(n_cpu_moe=int(info.block_count))
    return ExpertSeeds(fewest_experts_on_cpu(info, config, config.ctx, budgets),
                       highest_fitting_layers(info, all_in_ram, config.ctx, budgets))


def _search(info, config, hw, plan, backend, limits, progress, cancel, runner, seeded,
            ceiling: int | None = None, experts: ExpertSeeds | None = None,
            fit: FitAnswer | None = None) -> ProbeResult:
    """``ceiling``: search the context up to it too (GPU: at the placement found at the requested ctx).
    ``experts``: the model has experts the engine can keep in RAM apart from their layers. ``fit``: llama.cpp's
    own dry run, the seed where the plan has none, and shown beside the measured answer."""
    n_layer = int(info.block_count)
    gpu = _uses_gpu(hw, backend) or uses_workers(config, backend)  # workers take layers as GPUs do
    moe = experts if gpu else None  # experts the engine keeps in RAM apart from their layers, on a GPU
    top_ctx = max(ceiling or 0, config.ctx)
    bound = ((max_loads(n_layer + 2, True) if gpu else 0) + max_loads(_ctx_steps(top_ctx), True)
             + (max_loads(n_layer + 1, True) + 1 if moe is not None else 0))
    prober = _Prober(config, limits, progress, cancel, runner, bound, n_layer, spill_watch=gpu and spill_possible(hw))
    notes = []
    recommendation = None
    if moe is not None:
        seed = moe.fewest_in_ram if moe.fewest_in_ram is not None else _fit_experts(fit, n_layer)
        recommendation = expert_recommendation(prober.run, prober.attempts, n_layer, config.ctx,
                                               seed if seeded else None)
    if gpu and recommendation is None:
        # with experts: not even every expert in RAM fits beside every layer, so fewer layers, experts still in RAM
        n_cpu_moe = n_layer if moe is not None else config.n_cpu_moe
        planned = moe.layers_all_in_ram if moe is not None else plan.max_gpu_layers
        seed_layers = planned if planned is not None else _fit_layers(fit, n_layer)
        layers = _layer_search(prober, n_layer, config.ctx, seed_layers if seeded else None, n_cpu_moe)
        if layers is not None:
            recommendation = Recommendation(gpu_layers=layers, ctx=config.ctx, n_cpu_moe=n_cpu_moe)
    if gpu and recommendation is not None and top_ctx > config.ctx:  # the requested ctx fits: how much more does?
        more = _ctx_search(prober, recommendation.gpu_layers, top_ctx, config.ctx, recommendation.n_cpu_moe)
        recommendation = replace(recommendation, ctx=max(more or 0, config.ctx))
    if not gpu and plan.has_gpu and plan.recommended_gpu_layers:
        notes.append(T("No usable GPU here, so only the context was measured (on the CPU); the plan expects "
                       "{layers} layers to fit the VRAM budget.",
                       "这里没有可用的 GPU，所以只在 CPU 上测量了上下文；估算认为显存预算能放下 {layers} 层。",
                       layers=plan.recommended_gpu_layers))
    if gpu and experts is None and expert_split(info).is_moe:
        notes.append(EMBEDDED_NO_CPU_MOE)
    if fit is not None and fit.gpu_layers is not None:
        notes.append(_fit_note(fit, n_layer))
    if recommendation is None:
        best_ctx = _ctx_search(prober, 0, top_ctx, (plan.recommended_ctx or 0) if seeded else None)
        if best_ctx is not None:
            recommendation = Recommendation(gpu_layers=0, ctx=best_ctx, n_cpu_moe=config.n_cpu_moe)
    if progress is not None:
        last = prober.attempts[-1] if prober.attempts else None
        done = len(prober.attempts)
        progress(ProbeProgress(done, done, "done", 0, 0, T("The probe finished.", "探测完成。"), last))
    return ProbeResult(recommendation, prober.attempts, plan, cached=False, backend=backend.to_dict(), notes=notes)


def _fit_layers(fit: FitAnswer | None, n_layer: int) -> int:
    """The dry run's GPU layers as the layer search counts them (-1: all of them and the output layer); 0 if none."""
    if fit is None or fit.gpu_layers is None:
        return 0
    return n_layer + 1 if fit.gpu_layers < 0 else min(fit.gpu_layers, n_layer + 1)


def _fit_experts(fit: FitAnswer | None, n_layer: int) -> int | None:
    """The dry run's experts in RAM as a seed for the expert search, when it kept every layer on the GPU."""
    if fit is None or _fit_layers(fit, n_layer) <= n_layer:
        return None
    return fit.n_cpu_moe()


def _fit_note(fit: FitAnswer, n_layer: int) -> Text:
    where = Placement(n_layer, _fit_layers(fit, n_layer), fit.n_cpu_moe()).describe()
    return T("llama.cpp's own estimate (a dry run, nothing loaded) was: {where}. The settings above were measured "
             "with real loads.",
             "llama.cpp 自己的估算（只是预演，没有真正加载）是：{where_zh}。上面的设置是用真实加载测出来的。",
             where=where.render("en"), where_zh=where.render("zh"))
