"""llama.cpp's own dry run as one more probe seed (app/core/probe/fit_seed.py): its line read back, the real tool
asked, and the probe seeded by it where the plan has no answer."""

from __future__ import annotations

import pytest

from app.core.gguf.reader import read_model_info
from app.core.launch.config import LaunchConfig
from app.core.plan.budget import Margins
from app.core.probe import ProbeOptions, run_probe
from app.core.probe.fit_seed import FitAnswer, ask_fit, fit_targets_mib, fit_tool, parse_fit_line
from app.core.probe.sim_card import SimCard
from app.core.synthetic.moe_shapes import QWEN3_30B_A3B, moe_info
from tests.unit.core.probe.test_moe_search import CUDA, card

GiB, MiB = 1024**3, 1024**2


def test_a_dense_answer_and_an_expert_answer_are_read_back():
    assert parse_fit_line("-c 4096 -ngl -1", 30) == FitAnswer(-1, 4096, (), "-c 4096 -ngl -1")
    line = r"-c 8192 -ngl 49 -ot 'blk\.(0|1|2|3)\.ffn_(up|down|gate)_exps=CPU'"
    answer = parse_fit_line(line, 48)
    assert answer.gpu_layers == 49 and answer.ctx == 8192 and answer.experts_in_ram == (0, 1, 2, 3)
    assert answer.n_cpu_moe() == 4
    several = parse_fit_line(r"-ngl 49 -ot blk\.1[0-1]\.ffn_up_exps=CPU,blk\.5\.ffn_down_exps=CUDA0", 48)
    assert several.experts_in_ram == (10, 11)  # only overrides that put experts on the processor count
    assert parse_fit_line("llama_fit_params: printing fitted CLI arguments to stdout...", 48) is None
    assert parse_fit_line("-ngl 3 -ot blk\\.(=CPU", 48).experts_in_ram == ()  # not a regex: ignored, no crash
    assert parse_fit_line("-ngl 3 -ot 'blk", 48) is None  # an unbalanced quote: no answer, no crash


def test_a_smaller_budget_is_left_free_on_the_card():
    from app.core.hardware.gpu import GpuInfo

    gpu = GpuInfo(0, "Card", "GPU-1", 24 * GiB, 20 * GiB, 4 * GiB)
    hw = type("Hw", (), {"gpus": [gpu]})()
    margins = Margins()
    assert fit_targets_mib(hw, margins, None) == [margins.vram_keep(24 * GiB) // MiB]
    # an 8 GB card on this 24 GB one: fit must leave the 12 GB beyond the budget and the margin free
    assert fit_targets_mib(hw, margins, 8 * GiB) == [(12 * GiB + margins.vram_keep(8 * GiB)) // MiB]


def test_the_real_dry_run_answers_for_a_generated_model(tiny_model, llama_server_bin):
    tool = fit_tool(llama_server_bin)
    assert tool is not None and tool.name == "llama-fit-params"  # the test build ships it
    info = read_model_info(tiny_model)
    answer = ask_fit(info, LaunchConfig(model=str(tiny_model), backend="llama-server", ctx=2048), llama_server_bin, [])
    assert answer is not None and answer.ctx == 2048 and answer.gpu_layers is not None
    assert ask_fit(info, LaunchConfig(model=str(tiny_model)), None, []) is None  # the built-in engine has no tool


@pytest.fixture()
def simulated_model(tmp_path, monkeypatch):
    (tmp_path / "simulated-moe.gguf").write_bytes(b"GGUF")
    monkeypatch.chdir(tmp_path)
    return moe_info(QWEN3_30B_A3B)


def test_the_dry_run_seeds_the_expert_search_when_the_plan_has_no_answer(simulated_model, monkeypatch):
    import app.core.probe.probe as probe_module

    info = simulated_model
    sim = SimCard(info, 8 * GiB)
    no_plan = probe_module.ExpertSeeds(fewest_in_ram=None, layers_all_in_ram=None)
    monkeypatch.setattr(probe_module, "expert_seeds", lambda *args: no_plan)
    config = LaunchConfig(model=info.path, backend="llama-server", ctx=4096, flash_attn=True)
    n = info.block_count
    truth = min(k for k in range(n + 1) if sim.passes(config.with_changes(gpu_layers=n + 1, n_cpu_moe=k)))
    fit = FitAnswer(n + 1, 4096, tuple(range(truth)))
    options = ProbeOptions(vram_budget=8 * GiB, use_cache=False)
    seeded = run_probe(info, config, card(8 * GiB), options, backend=CUDA, runner=sim, fit=fit)
    blind = run_probe(info, config, card(8 * GiB), options, backend=CUDA, runner=SimCard(info, 8 * GiB))
    assert seeded.recommendation.n_cpu_moe in (truth, truth + 1)
    assert len(seeded.attempts) <= 4 < len(blind.attempts)
    note = " ".join(n.render("en") for n in seeded.notes)
    assert f"dry run, nothing loaded) was: all 48 layers on the GPU, experts of {truth} layers" in note
