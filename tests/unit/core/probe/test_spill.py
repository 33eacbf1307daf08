"""The spill rule (app/core/probe/spill.py, issue 28) behind the real run_probe, on a simulated card whose driver spills
into shared memory instead of failing (app/core/probe/sim_card.py ``shared_memory``), as NVIDIA's does on Windows:
a load too big for the card passes, its VRAM reading looks fine, and only the generation speed collapses ("roughly an
order of magnitude", AtomicBot-ai/atomic-llama-cpp-turboquant#77)."""

from __future__ import annotations

import random

import pytest

from app.core.launch.config import LaunchConfig
from app.core.probe import Attempt, ProbeOptions, run_probe
from app.core.probe.request import read_speeds
from app.core.probe.result import ProbeResult
from app.core.probe.sim_card import SIM_CUDA_BACKEND, SimCard, simulated_gpu_report
from app.core.probe.spill import (
    DIP_RATIO,
    MIN_GENERATED_TOKENS,
    SPILL_CAUSE,
    SPILL_RATIO,
    expected_tps,
    judge_spill,
    spill_possible,
)
from app.core.probe.wording import attempt_line
from tests.unit.core.plan.test_plan import make_info

GiB = 1024**3
MiB = 1024**2
N_LAYER = 32


@pytest.fixture
def info(tmp_path):
    """A 32-layer model of 218 MiB a layer (an 8B at Q4-ish): about 7 GiB, so an 8 GiB card holds most of it."""
    path = tmp_path / "spill.gguf"
    path.write_bytes(b"GGUF")
    vocab, n_embd = 128256, 4096
    return make_info(n_layer=N_LAYER, n_head=32, n_head_kv=8, head_dim=128, n_embd=n_embd, vocab=vocab,
                     layer_bytes=[218 * MiB] * N_LAYER, path=str(path),
                     non_layer={"token_embd.weight": vocab * n_embd, "output.weight": vocab * n_embd})


def config_of(info) -> LaunchConfig:
    return LaunchConfig(model=info.path, backend="llama-server", ctx=4096, flash_attn=True)


def probe(info, runner, vram: int, os_name: str = "Windows", seeded: bool = True) -> ProbeResult:
    return run_probe(info, config_of(info), simulated_gpu_report(vram, os_name),
                     ProbeOptions(vram_budget=vram, use_cache=False, seeded=seeded), backend=SIM_CUDA_BACKEND,
                     runner=runner)


def fitting(sim: SimCard, info) -> int:
    """The most GPU layers the card holds without spilling (asked of the simulated card for every count)."""
    return max(n for n in range(N_LAYER + 2) if sim.fits(config_of(info).with_changes(gpu_layers=n)))


def spilled(result: ProbeResult) -> list:
    return [a for a in result.attempts if a.cause == SPILL_CAUSE]


@pytest.mark.parametrize("error", [0.0, 0.15, 0.3, -0.08], ids=["plan-right", "plan-low", "plan-far-low",
                                                                  "plan-high"])
@pytest.mark.parametrize("seeded", [True, False], ids=["seeded", "blind"])
def test_a_spilling_card_ends_at_the_largest_layer_count_that_does_not_spill(info, error, seeded):
    """Seeded by the plan (the window, the CLI) a plan too hopeful starts on a spilled count, which the reference load
    (three quarters of its layers) exposes; blind, bisection's first pass is far below the boundary, and the line
    through two passing counts says what the next should reach."""
    sim = SimCard(info, 8 * GiB, error=error, shared_memory=32 * GiB)
    truth = fitting(sim, info)
    assert 0 < truth <= N_LAYER  # the model does not fit whole: some counts spill
    result = probe(info, sim, 8 * GiB, seeded=seeded)
    calls = [(a.gpu_layers, a.ok, a.cause, a.generation_tps) for a in result.attempts]
    assert result.recommendation is not None and result.recommendation.gpu_layers == truth, calls
    assert spilled(result), calls  # a spilled load passed its test request and was judged by its speed
    assert all(not sim.fits(config_of(info).with_changes(gpu_layers=a.gpu_layers)) for a in spilled(result))
    assert len(result.attempts) <= 10, calls
    # without the rule (Linux: no driver spills there) the same loads pass, and the probe would end on a spilled count
    linux = probe(info, sim, 8 * GiB, os_name="Linux", seeded=seeded)
    assert linux.recommendation is not None and linux.recommendation.gpu_layers > truth
    assert not spilled(linux)


def test_the_spilled_attempt_line_says_why_with_both_speeds(info):
    sim = SimCard(info, 8 * GiB, shared_memory=32 * GiB)
    result = probe(info, sim, 8 * GiB)
    attempt = spilled(result)[0]
    line = attempt_line(attempt)
    english, chinese = line.render("en"), line.render("zh")
    assert english.startswith("failed: The model spilled into shared memory: with "), english
    assert f"it generated {attempt.generation_tps:.1f} tokens/s" in english
    faster = [a for a in result.attempts if a.ok and a.gpu_layers < attempt.gpu_layers and a.generation_tps
              and a.generation_tps * SPILL_RATIO > attempt.generation_tps]
    assert faster and any(f"against {a.generation_tps:.1f} tokens/s" in english for a in faster), english
    assert "Fewer GPU layers are tried." in english
    assert "模型溢出到了共享内存" in chinese and f"{attempt.generation_tps:.1f}" in chinese
    assert attempt.peak_vram_bytes is not None and attempt.peak_vram_bytes < 8 * GiB  # the reading looked fine
    again = ProbeResult.from_dict(result.to_cache()).attempts
    assert [(a.cause, a.generated_tokens) for a in again] == [(a.cause, a.generated_tokens) for a in result.attempts]
    assert attempt_line(again[result.attempts.index(attempt)]).render("zh") == chinese


class Noisy:
    """The card's speeds with run-to-run noise: each measurement scaled by a factor in [low, 1]."""

    def __init__(self, sim: SimCard, low: float, seed: int) -> None:
        self.sim, self.low, self.random = sim, low, random.Random(seed)

    def __call__(self, config, limits, cancel):
        attempt = self.sim(config, limits, cancel)
        if attempt.generation_tps:
            attempt.generation_tps = round(attempt.generation_tps * self.random.uniform(self.low, 1.0), 2)
        return attempt


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("seeded", [True, False], ids=["seeded", "blind"])
@pytest.mark.parametrize("vram_gib", [6, 8])
def test_a_noisy_but_not_collapsed_measurement_does_not_trigger_it(info, seed, seeded, vram_gib):
    sim = SimCard(info, vram_gib * GiB, error=0.1)  # no shared memory: nothing spills, every speed honest but noisy
    result = probe(info, Noisy(sim, 0.7, seed), vram_gib * GiB, seeded=seeded)  # each up to 30 % slower
    assert not spilled(result), [(a.gpu_layers, a.generation_tps) for a in result.attempts]
    assert result.recommendation is not None and result.recommendation.gpu_layers == fitting(sim, info)


def measured(layers: int, tps: float, ok: bool = True) -> Attempt:
    return Attempt(layers, 4096, ok=ok, generation_tps=tps, generated_tokens=16)


def test_a_dip_of_less_than_a_quarter_is_never_a_spill():
    """Seen with 30 % noise before DIP_RATIO: references at 4 and 9 layers (the 4 measured slow) draw a line that
    promises 12.8 tokens/s at 13 layers; 13 measured 6.27, below half of that, yet only 9 % below the 9 layers."""
    refs = [measured(4, 4.38), measured(9, 6.91)]
    assert expected_tps(measured(13, 6.27), refs, 6.91) == pytest.approx(12.8, abs=0.1)
    assert judge_spill(measured(13, 6.27), refs, N_LAYER) is False
    collapsed = measured(13, 5.0)  # below both: a quarter slower than 9 layers and under half the line
    assert judge_spill(collapsed, refs, N_LAYER) is True and collapsed.cause == SPILL_CAUSE and not collapsed.ok
    assert "about 12.8 tokens/s" in (collapsed.reason.render("en") if collapsed.reason else "")
    lone = measured(13, 3.4)  # one reference: judged against it alone
    assert judge_spill(lone, refs[1:], N_LAYER) is True
    assert "expect" not in (lone.reason.render("en") if lone.reason else "expect")
    assert judge_spill(measured(13, 3.5), refs[1:], N_LAYER) is False  # 3.5 >= half of 6.91
    assert judge_spill(measured(13, 3.0), [measured(9, 6.91, ok=False)], N_LAYER) is False  # a failed load: no ref
    assert DIP_RATIO == 0.75 and SPILL_RATIO == 0.5


def test_a_speed_measured_on_too_few_tokens_is_not_judged(info):
    sim = SimCard(info, 8 * GiB, shared_memory=32 * GiB, generated_tokens=MIN_GENERATED_TOKENS - 1)
    result = probe(info, sim, 8 * GiB)
    assert not spilled(result)  # a collapse it cannot tell from noise: the loads pass as they do elsewhere
    assert result.recommendation is not None and result.recommendation.gpu_layers > fitting(sim, info)


def test_the_rule_applies_only_to_an_nvidia_card_on_windows():
    assert spill_possible(simulated_gpu_report(8 * GiB, "Windows"))
    assert not spill_possible(simulated_gpu_report(8 * GiB, "Linux"))
    no_card = simulated_gpu_report(8 * GiB, "Windows")
    no_card.gpus.clear()
    assert not spill_possible(no_card) and not spill_possible(None)


def test_the_generated_token_count_is_read_from_the_server_s_timings():
    answer = {"timings": {"prompt_per_second": 812.5, "predicted_per_second": 41.25, "predicted_n": 16}}
    evaluation = read_speeds(answer, 530)
    assert (evaluation.prompt_tps, evaluation.generation_tps, evaluation.generated_tokens) == (812.5, 41.25, 16)
    assert read_speeds({"timings": {"predicted_n": "x"}}, 530).generated_tokens is None
    assert read_speeds({}, 530).generated_tokens is None
