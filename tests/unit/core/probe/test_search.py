"""The probe's search against a simulated device (a loader with a VRAM budget), no servers.

The simulated loader judges each attempt with the plan's own memory model plus what the plan cannot
know (estimate error, VRAM held by other programs, jitter between loads), so the searches are
checked for load counts and for landing within one step of the true boundary.
"""

from __future__ import annotations

import math
import random
import threading
from dataclasses import replace

import pytest

from app.core.launch.config import LaunchConfig
from app.core.plan.budget import Margins, device_budgets
from app.core.plan.estimate import estimate_devices
from app.core.probe import Attempt, ProbeCancelled, ProbeOptions, Recommendation, max_loads, run_probe, search_highest
from app.core.probe.sim_card import SIM_CUDA_BACKEND, simulated_gpu_report
from tests.unit.core.plan.test_plan import make_info

GiB = 1024**3
MiB = 1024**2
CUDA_BACKEND = SIM_CUDA_BACKEND


# -- the pure search ----------------------------------------------------------------------------------------

def blind_target(n: int, best: int | None) -> int:
    target = math.ceil(math.log2(n)) + 1 if n > 1 else 2
    # n a power of two and the answer exactly 0: one more (n + 1 outcomes cannot all be re-checked in time)
    return target + 1 if best == 0 and n & (n - 1) == 0 else target


def at_most(truth: int):
    """A trial that loads every value up to ``truth`` and fails above it."""
    return lambda i: i <= truth


@pytest.mark.parametrize("n", list(range(1, 40)) + [64, 65, 100, 130, 514])
def test_blind_search_is_exact_within_log2_plus_one(n):
    for truth in range(-1, n):
        result = search_highest(n, at_most(truth))
        assert result.best == (truth if truth >= 0 else None)
        assert result.loads <= blind_target(n, result.best), (n, truth, result.steps)


@pytest.mark.parametrize("n", [2, 3, 9, 34, 42, 82, 128])
def test_seeded_search_good_plan_needs_at_most_three_loads(n):
    for truth in range(0, n):
        exact = search_highest(n, at_most(truth), seed=truth)
        assert exact.best == truth and exact.loads <= 3
        for seed in (truth - 1, truth + 1):
            if 0 <= seed < n:
                near = search_highest(n, at_most(truth), seed=seed)
                assert near.best == truth and near.loads <= 4
        for seed in range(0, n, max(n // 9, 1)):  # wrong seeds of every size
            far = search_highest(n, at_most(truth), seed=seed)
            assert far.best == truth and far.loads <= max_loads(n, seeded=True)


def test_lucky_pass_above_the_boundary_is_caught_by_the_recheck():
    calls = []

    def flaky(i):  # index 6 passes once by luck, then fails like the truth says
        calls.append(i)
        return i <= 5 or (i == 6 and calls.count(6) == 1)

    result = search_highest(10, flaky, seed=6)
    assert result.best == 5 and any(s.recheck for s in result.steps)


# -- a simulated device behind the real run_probe ---------------------------------------------------------------

class SimDevice:
    """Attempt runner: GPU usage = plan model × (1 + error) + hidden use by other programs ± jitter."""

    def __init__(self, info, config, vram, *, error=0.0, hidden=0, jitter=0, seed=0, flaky_every=0):
        self.info, self.config, self.vram = info, config, vram
        self.error, self.hidden, self.jitter = error, hidden, jitter
        self.random = random.Random(seed)
        self.flaky_every = flaky_every
        self.budgets = device_budgets(None, vram_budget=vram, ram_budget=256 * GiB)
        self.calls: list[tuple[int, int]] = []

    def vram_use(self, ngl: int, ctx: int) -> float:
        gpu = estimate_devices(self.info, self.config, ngl, ctx, self.budgets)[1][0]
        return gpu.total_bytes * (1 + self.error) + self.hidden

    def passes(self, ngl: int, ctx: int, noise: float = 0.0) -> bool:
        keep = Margins().vram_keep(self.vram)
        return self.vram_use(ngl, ctx) + noise + keep <= self.vram

    def truth(self, ctx: int) -> int | None:
        passing = [n for n in range(self.info.block_count + 2) if self.passes(n, ctx)]
        return max(passing) if passing else None

    def __call__(self, config: LaunchConfig, limits, cancel) -> Attempt:
        self.calls.append((config.gpu_layers, config.ctx))
        if self.flaky_every and len(self.calls) % self.flaky_every == 0:
            return Attempt(config.gpu_layers, config.ctx, ok=False, cause="request")  # not about memory
        noise = self.random.uniform(-self.jitter, self.jitter) if self.jitter else 0.0
        ok = self.passes(config.gpu_layers, config.ctx, noise)
        peak = int(self.vram_use(config.gpu_layers, config.ctx))
        return Attempt(config.gpu_layers, config.ctx, ok=ok, peak_vram_bytes=peak,
                       cause=None if ok else "gpu_out_of_memory")


gpu_report = simulated_gpu_report


SHAPES = [  # (n_layer, n_head, n_head_kv, head_dim, layer MiB, vocab)
    (2, 8, 8, 64, 40, 32000), (12, 12, 4, 64, 60, 50000), (24, 16, 8, 128, 120, 32000),
    (32, 32, 8, 128, 218, 128256), (40, 40, 8, 128, 300, 152064), (61, 32, 4, 128, 90, 100000),
    (80, 64, 8, 128, 420, 128256),
]
BUDGETS_GIB = [3, 6, 8, 12, 24]


def shaped(tmp_path, n_layer, n_head, n_kv, head_dim, layer_mib, vocab):
    path = tmp_path / f"shape-{n_layer}.gguf"
    path.write_bytes(b"GGUF")
    return make_info(n_layer=n_layer, n_head=n_head, n_head_kv=n_kv, head_dim=head_dim, n_embd=n_head * head_dim,
                     vocab=vocab, layer_bytes=[layer_mib * MiB] * n_layer, path=str(path),
                     non_layer={"token_embd.weight": vocab * n_head * head_dim,
                                "output.weight": vocab * n_head * head_dim})


def probe_sim(info, device, vram, **kw):
    config = device.config
    return run_probe(info, config, gpu_report(vram), ProbeOptions(vram_budget=vram, use_cache=False),
                     backend=CUDA_BACKEND, runner=device, **kw)


@pytest.mark.parametrize("shape", [pytest.param(s, id=f"L{s[0]}", marks=[pytest.mark.slow] if s[0] >= 80 else [])
                                   for s in SHAPES])  # 80 layers: 1.6 s of CPU, in the slow lane
def test_layer_search_on_many_shapes_and_budgets(tmp_path, shape):
    info = shaped(tmp_path, *shape)
    config = LaunchConfig(model=info.path, backend="llama-server", ctx=4096, flash_attn=True)
    n = info.block_count + 2
    for gib in BUDGETS_GIB:
        vram = gib * GiB
        seeded_limit = max_loads(n, True)
        for error, hidden, limit in ((0.0, 0, 3), (0.04, 0, seeded_limit), (0.0, int(vram * 0.4), seeded_limit),
                                     (-0.3, 0, seeded_limit)):
            device = SimDevice(info, config, vram, error=error, hidden=hidden)
            result = probe_sim(info, device, vram)
            truth = device.truth(4096)
            label = (shape, gib, error, hidden, device.calls)
            if truth is None:  # not even 0 layers: the probe moved on to the context at 0 layers
                assert result.recommendation is None or result.recommendation.gpu_layers == 0, label
                continue
            assert result.recommendation == Recommendation(gpu_layers=truth, ctx=4096), label
            assert len(result.attempts) <= limit, label


def test_badly_wrong_plan_still_lands_on_the_truth(tmp_path):
    info = shaped(tmp_path, *SHAPES[3])
    config = LaunchConfig(model=info.path, backend="llama-server", ctx=8192)
    vram = 12 * GiB
    device = SimDevice(info, config, vram, hidden=6 * GiB)  # another program holds half the card
    result = probe_sim(info, device, vram)
    assert result.plan.recommended_gpu_layers - device.truth(8192) >= 10  # the plan is far off
    assert result.recommendation.gpu_layers == device.truth(8192)
    assert len(result.attempts) <= max_loads(info.block_count + 2, seeded=True)


@pytest.mark.parametrize("seed", range(12))
def test_noise_near_the_boundary_stays_within_one_step(tmp_path, seed):
    info = shaped(tmp_path, *SHAPES[seed % len(SHAPES)])
    config = LaunchConfig(model=info.path, backend="llama-server", ctx=4096, flash_attn=True)
    vram = BUDGETS_GIB[seed % len(BUDGETS_GIB)] * GiB
    layer = info.layer_bytes[0]
    device = SimDevice(info, config, vram, error=0.03 * (seed % 3 - 1), jitter=1.2 * layer, seed=seed)
    result = probe_sim(info, device, vram)
    truth = device.truth(4096)
    if truth is None or result.recommendation is None:
        return
    assert abs(result.recommendation.gpu_layers - truth) <= 1, (truth, device.calls)
    assert len(result.attempts) <= max_loads(info.block_count + 2, seeded=True) + 4


def test_failure_not_about_memory_is_retried_once(tmp_path):
    info = shaped(tmp_path, *SHAPES[2])
    config = LaunchConfig(model=info.path, backend="llama-server", ctx=4096)
    device = SimDevice(info, config, 8 * GiB, flaky_every=2)
    result = probe_sim(info, device, 8 * GiB)
    assert result.recommendation.gpu_layers == device.truth(4096)
    retried = [a for a in result.attempts if a.cause == "request"]
    assert retried and all(result.attempts[result.attempts.index(a) + 1].gpu_layers == a.gpu_layers for a in retried)


def test_zero_layers_failing_moves_on_to_the_context(tmp_path):
    info = shaped(tmp_path, *SHAPES[4])
    config = LaunchConfig(model=info.path, backend="llama-server", ctx=32768)
    vram = 4 * GiB

    class RamBound(SimDevice):  # the GPU takes no layer at all, and RAM only holds a short context
        def passes(self, ngl, ctx, noise=0.0):
            return ngl == 0 and ctx <= 9000

    device = RamBound(info, config, vram)
    result = probe_sim(info, device, vram)
    assert result.recommendation == Recommendation(gpu_layers=0, ctx=8960)
    assert {c[1] for c in device.calls if c[0] == 0} - {32768}  # the ctx phase ran at 0 layers
    layer_phase = [c for c in device.calls if c[1] == 32768]
    assert len(layer_phase) <= max_loads(info.block_count + 2, True)


def test_progress_counts_attempts_and_cancel_stops_the_search(tmp_path):
    info = shaped(tmp_path, *SHAPES[3])
    config = LaunchConfig(model=info.path, backend="llama-server", ctx=4096)
    device = SimDevice(info, config, 8 * GiB, hidden=3 * GiB)
    cancel = threading.Event()
    events = []

    def on_progress(event):
        events.append(event)
        if event.attempt == 3:
            cancel.set()

    with pytest.raises(ProbeCancelled):
        probe_sim(info, device, 8 * GiB, progress=on_progress, cancel=cancel)
    assert [e.attempt for e in events] == [1, 2, 3]
    assert all(e.attempt <= e.max_attempts for e in events) and len(device.calls) == 2
    assert "GPU layers" in str(events[0].message)


def test_cpu_only_searches_context_in_steps_of_256(tmp_path):
    info = shaped(tmp_path, *SHAPES[1])
    config = LaunchConfig(model=info.path, backend="llama-server", ctx=16384)
    seen = []

    def runner(cfg, limits, cancel):
        seen.append((cfg.gpu_layers, cfg.ctx))
        return Attempt(cfg.gpu_layers, cfg.ctx, ok=cfg.ctx <= 5000, cause=None if cfg.ctx <= 5000 else "oom_killed")

    cpu_only = replace(gpu_report(1), gpus=[])
    result = run_probe(info, config, cpu_only, ProbeOptions(ram_budget=64 * GiB, use_cache=False),
                       backend=CUDA_BACKEND, runner=runner)
    assert result.recommendation == Recommendation(gpu_layers=0, ctx=4864)
    assert all(layers == 0 and ctx % 256 == 0 for layers, ctx in seen)
    assert len(seen) <= max_loads(16384 // 256, seeded=True)


def test_cached_result_is_reused_until_the_key_or_free_vram_changes(tmp_path):
    info = shaped(tmp_path, *SHAPES[2])
    config = LaunchConfig(model=info.path, backend="llama-server", ctx=4096)
    vram = 8 * GiB
    device = SimDevice(info, config, vram)
    first = run_probe(info, config, gpu_report(vram), ProbeOptions(vram_budget=vram), backend=CUDA_BACKEND,
                      runner=device)
    calls = len(device.calls)
    second = run_probe(info, config, gpu_report(vram), ProbeOptions(vram_budget=vram), backend=CUDA_BACKEND,
                       runner=device)
    assert not first.cached and second.cached and len(device.calls) == calls
    assert second.recommendation == first.recommendation
    assert second.to_dict()["attempts"] == first.to_dict()["attempts"] or len(second.attempts) == len(first.attempts)
    other_ctx = config.with_changes(ctx=2048)
    device.config = other_ctx
    third = run_probe(info, other_ctx, gpu_report(vram), ProbeOptions(vram_budget=vram), backend=CUDA_BACKEND,
                      runner=device)
    assert not third.cached and len(device.calls) > calls
    calls = len(device.calls)
    device.config = config
    busy = gpu_report(vram)
    busy.gpus[0] = replace(busy.gpus[0], vram_free_bytes=256 * MiB)  # less free now than the probe measured
    fourth = run_probe(info, config, busy, ProbeOptions(vram_budget=vram), backend=CUDA_BACKEND, runner=device)
    assert not fourth.cached and len(device.calls) > calls


def test_a_setting_that_failed_is_never_loaded_twice(tmp_path):
    info = shaped(tmp_path, *SHAPES[4])
    config = LaunchConfig(model=info.path, backend="llama-server", ctx=32768)

    class RamBound(SimDevice):  # 0 layers at 32768 fails in the layer phase; the ctx phase must not load it again
        def passes(self, ngl, ctx, noise=0.0):
            return ngl == 0 and ctx <= 9000

    device = RamBound(info, config, 4 * GiB)
    probe_sim(info, device, 4 * GiB)
    failed = [c for c in device.calls if not device.passes(*c)]
    assert len(failed) == len(set(failed)), device.calls


def test_as_much_context_as_fits_searches_up_to_the_training_length(tmp_path):
    info = replace(shaped(tmp_path, *SHAPES[2]), context_length=32768)
    config = LaunchConfig(model=info.path, backend="llama-server", ctx=4096)

    class ContextBound(SimDevice):  # every layer fits; the KV cache runs out above ~20000 tokens
        def passes(self, ngl, ctx, noise=0.0):
            return ctx <= 20000

    device = ContextBound(info, config, 8 * GiB)
    asked = run_probe(info, config, gpu_report(8 * GiB), ProbeOptions(vram_budget=8 * GiB, use_cache=False),
                      backend=CUDA_BACKEND, runner=device)
    assert asked.recommendation.ctx == 4096 and max(c[1] for c in device.calls) == 4096  # never above the ask
    device.calls.clear()
    most = run_probe(info, config, gpu_report(8 * GiB),
                     ProbeOptions(vram_budget=8 * GiB, use_cache=False, max_context=True),
                     backend=CUDA_BACKEND, runner=device)
    assert most.recommendation == Recommendation(gpu_layers=asked.recommendation.gpu_layers, ctx=19968)
    assert max(c[1] for c in device.calls) <= 32768
    cpu_only = replace(gpu_report(1), gpus=[])
    cpu = run_probe(info, config, cpu_only, ProbeOptions(ram_budget=64 * GiB, use_cache=False, max_context=True),
                    backend=CUDA_BACKEND, runner=device)
    assert cpu.recommendation == Recommendation(gpu_layers=0, ctx=19968)
