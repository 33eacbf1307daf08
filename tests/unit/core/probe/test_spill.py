"""The spill rule (app/core/probe/spill.py, issue 28) behind the real run_probe, on a simulated card whose driver spills
into shared memory instead of failing (app/core/probe/sim_card.py ``shared_memory``), as NVIDIA's does on Windows:
a load too big for the card passes, its VRAM reading looks fine, and only the generation speed collapses ("roughly an
order of magnitude", AtomicBot-ai/atomic-llama-cpp-turboquant#77)."""

from __future__ import annotations

import random

import pytest

from app.core.launch.config import LaunchConfig
from app.core.probe import ProbeOptions, run_probe
from app.core.probe.request import read_speeds
from app.core.probe.result import ProbeResult
from app.core.probe.sim_card import SIM_CUDA_BACKEND, SimCard, simulated_gpu_report
from app.core.probe.spill import MIN_GENERATED_TOKENS, SPILL_CAUSE, SPILL_RATIO, spill_possible
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


def probe(info, runner, vram: int, os_name: str = "Windows") -> ProbeResult:
    return run_probe(info, config_of(info), simulated_gpu_report(vram, os_name),
                     ProbeOptions(vram_budget=vram, use_cache=False), backend=SIM_CUDA_BACKEND,
                     runner=runner)


def fitting(sim: SimCard, info) -> int:
    """The most GPU layers the card holds without spilling (asked of the simulated card for every count)."""
    return max(n for n in range(N_LAYER + 2) if sim.fits(config_of(info).with_changes(gpu_layers=n)))


def spilled(result: ProbeResult) -> list:
    return [a for a in result.attempts if a.cause == SPILL_CAUSE]


@pytest.mark.parametrize("error", [0.0, 0.15, 0.3, -0.08], ids=["plan-right", "plan-low", "plan-far-low",
                                                                  "plan-high"])
def test_a_spilling_card_ends_at_the_largest_layer_count_that_does_not_spill(info, error):
    """Seeded by the plan, as the window and the CLI probe: a plan too hopeful starts on a spilled count, which the
    reference load (three quarters of its layers) exposes."""
    sim = SimCard(info, 8 * GiB, error=error, shared_memory=32 * GiB)
    truth = fitting(sim, info)
    assert 0 < truth <= N_LAYER  # the model does not fit whole: some counts spill
    result = probe(info, sim, 8 * GiB)
    calls = [(a.gpu_layers, a.ok, a.cause, a.generation_tps) for a in result.attempts]
    assert result.recommendation is not None and result.recommendation.gpu_layers == truth, calls
    assert spilled(result), calls  # a spilled load passed its test request and was judged by its speed
    assert all(not sim.fits(config_of(info).with_changes(gpu_layers=a.gpu_layers)) for a in spilled(result))
    assert len(result.attempts) <= 10, calls
    # without the rule (Linux: no driver spills there) the same loads pass, and the probe would end on a spilled count
    linux = probe(info, sim, 8 * GiB, os_name="Linux")
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


@pytest.mark.parametrize("seed", range(8))
def test_a_noisy_but_not_collapsed_measurement_does_not_trigger_it(info, seed):
    sim = SimCard(info, 8 * GiB)  # no shared memory: nothing spills, every speed is honest but noisy
    result = probe(info, Noisy(sim, 0.55, seed), 8 * GiB)  # up to 45 % slower: worse than any short request's noise
    assert not spilled(result), [(a.gpu_layers, a.generation_tps) for a in result.attempts]
    assert result.recommendation is not None and result.recommendation.gpu_layers == fitting(sim, info)


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
