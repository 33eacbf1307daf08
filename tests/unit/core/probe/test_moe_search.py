"""The probe on models with experts (app/core/probe/moe_search.py) behind the real run_probe, on a simulated card
(app/core/probe/sim_card.py) with the shapes of Qwen3-30B-A3B and gpt-oss-20b: placements, loads, speeds."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.core.launch.config import LaunchConfig
from app.core.plan.budget import device_budgets
from app.core.plan.moe_placement import fewest_experts_on_cpu
from app.core.plan.placement import Placement
from app.core.probe import ProbeOptions, Recommendation, run_probe
from app.core.probe.moe_search import SPEED_NOISE
from app.core.probe.result import ProbeResult
from app.core.probe.sim_card import SIM_CUDA_BACKEND as CUDA
from app.core.probe.sim_card import SimCard
from app.core.probe.sim_card import simulated_gpu_report as card
from app.core.synthetic.moe_shapes import GPT_OSS_20B, QWEN3_30B_A3B, SHAPES, moe_info

GiB = 1024**3


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    """The probe's cache key reads the model file's identity: the simulated model gets a (tiny) file."""
    (tmp_path / "simulated-moe.gguf").write_bytes(b"GGUF")
    monkeypatch.chdir(tmp_path)


def probe(info, sim: SimCard, ctx=4096, backend="llama-server", **options) -> ProbeResult:
    config = LaunchConfig(model=info.path, backend=backend, ctx=ctx, flash_attn=True)
    return run_probe(info, config, card(sim.vram), ProbeOptions(vram_budget=sim.vram, use_cache=False, **options),
                     backend=CUDA, runner=sim)


def truth(info, sim: SimCard, ctx=4096) -> int | None:
    """The fewest layers whose experts must stay in RAM, by asking the simulated card about every placement."""
    config = LaunchConfig(model=info.path, backend="llama-server", ctx=ctx, flash_attn=True)
    n = info.block_count
    fitting = [k for k in range(n + 1)
               if sim.passes(config.with_changes(gpu_layers=n + 1, n_cpu_moe=k))]
    return min(fitting) if fitting else None


@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_an_8_gb_card_gets_every_layer_and_an_expert_split_within_four_loads(shape):
    info = moe_info(shape)
    sim = SimCard(info, 8 * GiB)
    result = probe(info, sim)
    fewest = truth(info, sim)
    rec = result.recommendation
    assert 0 < fewest < info.block_count, fewest  # the model does not fit whole, and fits with some experts out
    assert rec.gpu_layers == info.block_count + 1 and rec.ctx == 4096
    assert rec.n_cpu_moe in (fewest, fewest + 1)  # the fewest in RAM, or the next one when measured faster
    assert len(result.attempts) <= 4, sim.calls  # seeded by the plan: seed, its neighbour, re-check, one for speed
    speeds = {a.n_cpu_moe for a in result.attempts if a.ok and a.generation_tps}
    assert {fewest, fewest + 1} <= speeds  # two passing placements measured side by side
    words = result.summary().render("en")
    assert f"all {info.block_count} layers on the GPU, experts of {rec.n_cpu_moe} layers on the processor" in words
    assert "tokens/s" in words
    assert "层的专家放在处理器上" in result.summary().render("zh")


def test_the_expert_split_is_faster_than_offloading_fewer_whole_layers():
    info = moe_info(GPT_OSS_20B)
    sim = SimCard(info, 8 * GiB)
    rec = probe(info, sim).recommendation
    config = LaunchConfig(model=info.path, backend="llama-server", ctx=4096, flash_attn=True)
    whole_layers = max(n for n in range(info.block_count + 2) if sim.passes(config.with_changes(gpu_layers=n)))
    split = sim.generation_tps(config.with_changes(gpu_layers=rec.gpu_layers, n_cpu_moe=rec.n_cpu_moe))
    dense = sim.generation_tps(config.with_changes(gpu_layers=whole_layers))
    assert split > 1.1 * dense, (split, dense)  # the bandwidth model: attention stays on the fast memory


def test_a_card_filled_to_the_brim_loses_to_the_next_placement_when_measured_slower():
    info = moe_info(QWEN3_30B_A3B)
    sim = SimCard(info, 8 * GiB, spill_above=0.0)  # every placement "spills": speeds fall with VRAM use alike
    plain = probe(info, sim).recommendation
    brim = SimCard(info, 8 * GiB)
    config = LaunchConfig(model=info.path, backend="llama-server", ctx=4096, flash_attn=True)
    fewest = truth(info, brim)
    # the fewest-in-RAM placement sits above the spill line, the next one below it
    full = brim.vram_use(config.with_changes(gpu_layers=info.block_count + 1, n_cpu_moe=fewest))
    brim.spill_above = (full - 1) / brim.vram
    result = probe(info, brim)
    assert result.recommendation.n_cpu_moe == fewest + 1, [(a.n_cpu_moe, a.generation_tps) for a in result.attempts]
    assert plain.n_cpu_moe == truth(info, sim)  # without the slowdown the fewest in RAM wins (within the noise)
    assert SPEED_NOISE > 0


def test_a_card_too_small_for_every_layer_offloads_fewer_with_every_expert_in_ram():
    info = moe_info(QWEN3_30B_A3B)
    sim = SimCard(info, 2 * GiB)  # attention and KV of all 48 layers plus the output layer do not fit
    result = probe(info, sim)
    rec = result.recommendation
    n = info.block_count
    assert truth(info, sim) is None
    assert 0 < rec.gpu_layers <= n and rec.n_cpu_moe == n
    words = Placement(n, rec.gpu_layers, n).describe().render("en")
    assert words.endswith("the experts of every layer on the processor"), words


def test_the_plan_seed_matches_the_card_when_the_plan_is_right():
    info = moe_info(QWEN3_30B_A3B)
    config = LaunchConfig(model=info.path, backend="llama-server", ctx=4096, flash_attn=True)
    budgets = device_budgets(None, vram_budget=8 * GiB, ram_budget=512 * 1000**3)
    assert fewest_experts_on_cpu(info, config, 4096, budgets) == truth(info, SimCard(info, 8 * GiB))
    huge = device_budgets(None, vram_budget=64 * GiB, ram_budget=512 * 1000**3)
    assert fewest_experts_on_cpu(info, config, 4096, huge) == 0
    tiny = device_budgets(None, vram_budget=GiB // 2, ram_budget=512 * 1000**3)
    assert fewest_experts_on_cpu(info, config, 4096, tiny) is None


@pytest.mark.parametrize("error", [0.15, -0.15])
def test_a_wrong_plan_still_lands_on_the_card_s_answer(error):
    info = moe_info(GPT_OSS_20B)
    sim = SimCard(info, 8 * GiB, error=error)
    result = probe(info, sim)
    fewest = truth(info, sim)
    assert result.recommendation.n_cpu_moe in (fewest, fewest + 1)
    assert len(result.attempts) <= 9, sim.calls


def test_the_built_in_engine_is_told_it_cannot_split_experts():
    info = moe_info(QWEN3_30B_A3B)
    sim = SimCard(info, 8 * GiB)
    result = probe(info, sim, backend="embedded")
    assert result.recommendation.n_cpu_moe == 0 and all(a.n_cpu_moe == 0 for a in result.attempts)
    assert any("llama-server engine can" in note.render("en") for note in result.notes)


def test_placements_survive_the_cache_and_old_results_read_as_no_split():
    info = moe_info(QWEN3_30B_A3B)
    result = probe(info, SimCard(info, 8 * GiB))
    again = ProbeResult.from_dict(result.to_cache())
    assert again.recommendation == result.recommendation
    assert [(a.n_cpu_moe, a.generation_tps) for a in again.attempts] == [
        (a.n_cpu_moe, a.generation_tps) for a in result.attempts]
    assert Recommendation.from_dict({"gpu_layers": 3, "ctx": 4096}) == Recommendation(3, 4096, 0)
    assert Recommendation.from_dict({"gpu_layers": 3, "ctx": 4096, "n_cpu_moe": "x"}) is None
    assert replace(result.recommendation, n_cpu_moe=0).changes()["n_cpu_moe"] == 0
