"""'Safe' with a full context: the growth a full context adds over a test prompt, the judgement on measured + growth,
and one sentence that says which RAM figure was measured and which is projected (issue 22, point 4)."""

from __future__ import annotations

import re

from app.core.gguf.reader import read_model_info
from app.core.launch.config import LaunchConfig
from app.core.plan.budget import Margins
from app.core.plan.memory import make_plan
from app.core.probe.attempt import Attempt, AttemptLimits, _judge_margins
from app.core.probe.full_context import FullContextProjector
from app.core.probe.margins import FreeNow, RamUse, margin_problem
from app.core.probe.result import ProbeResult, Recommendation
from app.core.probe.wording import attempt_line
from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama
from app.core.text import T

MiB, GiB = 1024**2, 1024**3
# the KV-heavy model: 32 layers x 2 KV heads x 64 dims, 16 KiB of KV cache per token
KV_SPEC = TinyModelSpec(n_layers=32, n_embd=128, n_head=2, n_head_kv=2, n_ff=128, ctx_train=32768, f16=True,
                        name="kv-heavy")


def _projector(tmp_path, config: LaunchConfig) -> tuple[FullContextProjector, LaunchConfig]:
    model = write_tiny_llama(tmp_path / "kv-heavy.gguf", KV_SPEC)
    config = config.with_changes(model=str(model))
    info = read_model_info(model)
    return FullContextProjector.from_plan(info, make_plan(info, config, None, ram_budget=64 * GiB)), config


def test_a_full_context_adds_what_grows_with_the_cells_in_use(tmp_path):
    projector, config = _projector(tmp_path, LaunchConfig(model="m", ctx=11008, flash_attn=False))
    at_11k = projector.growth_bytes(config, 528)
    at_4k = projector.growth_bytes(config.with_changes(ctx=4096), 528)
    assert 0 < at_4k < at_11k  # without flash attention the scores and masks grow with the context
    filled = projector.growth_bytes(config, 11008)
    assert 0 < filled < at_11k  # the bookkeeping of the rest of the context is done; the compute buffer still counts
    flash = projector.growth_bytes(config.with_changes(flash_attn=True), 528)
    assert 0 < flash < at_11k  # flash attention keeps no scores
    # a compute buffer llama.cpp reported larger than the plan's is reserved at that size
    assert GiB < projector.growth_bytes(config, 528, reported_compute=GiB) < GiB + at_11k


def test_llama_servers_prompt_cache_counts_as_growth(tmp_path):
    projector, config = _projector(tmp_path, LaunchConfig(model="m", backend="llama-server", ctx=4096))
    without = projector.growth_bytes(config, 528)
    assert projector.growth_bytes(config.with_changes(cache_ram_mib=256), 528) == without + 256 * MiB


class Growth:
    def __init__(self, growth: int) -> None:
        self.growth = growth

    def growth_bytes(self, config, prompt_tokens, reported_compute=None) -> int:
        return self.growth


def test_the_judgement_uses_the_full_context_and_the_sentence_names_both_figures():
    """The issue's attempt: 203 MiB measured after the test prompt, about 410 MiB with a full context, 400M budget."""
    attempt = Attempt(0, 11008, ok=True, peak_rss_bytes=203 * MiB, prompt_tokens=528, seconds=4.2)
    limits = AttemptLimits(ram_budget=400 * MiB, full_context=Growth(207 * MiB))
    _judge_margins(attempt, LaunchConfig(model="m", ctx=11008), limits, None)
    assert not attempt.ok and attempt.cause == "margin" and attempt.full_context_rss_bytes == 410 * MiB
    assert attempt.reason.render("en") == ("Measured 203.0 MiB of RAM after loading and a 528-token prompt; with a "
                                           "full context it would need about 410.0 MiB, more than the 400.0 MiB "
                                           "budget.")
    assert "410.0 MiB" in attempt.reason.render("zh") and "203.0 MiB" in attempt.reason.render("zh")
    line = attempt_line(attempt).render("en")
    assert line.startswith("failed: Measured 203.0 MiB") and line.endswith("(4.2 s)")
    assert len(re.findall(r"\d+\.\d MiB", line)) == 3  # measured, projected, budget: each once, each labelled


def test_a_load_that_fits_with_a_full_context_passes_and_says_both_figures():
    attempt = Attempt(0, 8192, ok=True, peak_rss_bytes=203 * MiB, prompt_tokens=528, seconds=3.0)
    _judge_margins(attempt, LaunchConfig(model="m", ctx=8192), AttemptLimits(ram_budget=400 * MiB,
                                                                             full_context=Growth(150 * MiB)), None)
    assert attempt.ok and attempt.full_context_rss_bytes == 353 * MiB
    assert attempt_line(attempt).render("en") == ("passed; peak RAM 203.0 MiB measured, about 353.0 MiB with a full "
                                                  "context; 3.0 s")
    summary = ProbeResult(Recommendation(0, 8192), [attempt], None).summary().render("en")
    assert "peak RAM 203.0 MiB measured, about 353.0 MiB with a full context, no graphics memory used" in summary


def test_over_the_budget_already_when_measured_says_measured():
    problem = margin_problem(RamUse(420 * MiB, 600 * MiB, 528), None, Margins(), ram_budget=400 * MiB,
                             vram_budget=None, free_now=None, uses_gpu=False)
    assert "Measured 420.0 MiB" in problem.render("en") and "about 600.0 MiB" in problem.render("en")
    same = margin_problem(RamUse(420 * MiB, 420 * MiB), None, Margins(), ram_budget=400 * MiB, vram_budget=None,
                          free_now=None, uses_gpu=False)
    assert same.render("en") == "The server used 420.0 MiB of RAM (measured), more than the 400.0 MiB budget."


def test_the_free_ram_margin_is_judged_with_the_growth_taken_out():
    free = FreeNow(ram_free_bytes=3 * GiB, ram_total_bytes=32 * GiB, gpus=())  # the margin keeps 1.6 GiB
    fine = margin_problem(RamUse(1 * GiB, 2 * GiB), None, Margins(), ram_budget=None, vram_budget=None,
                          free_now=free, uses_gpu=False)
    assert fine is None
    short = margin_problem(RamUse(1 * GiB, 3 * GiB), None, Margins(), ram_budget=None, vram_budget=None,
                           free_now=free, uses_gpu=False)
    assert short.render("en").startswith("With a full context only about 1.0 GiB of RAM would stay free")


def test_a_crash_line_keeps_its_reason_and_the_measured_peak():
    crashed = Attempt(0, 16384, ok=False, cause="oom_killed", reason=T("Out of memory.", "内存不足。"),
                      peak_rss_bytes=390 * MiB, seconds=2.0)
    assert attempt_line(crashed).render("en") == "failed: Out of memory. (peak RAM 390.0 MiB measured; 2.0 s)"
    assert "实测内存峰值 390.0 MiB" in attempt_line(crashed).render("zh")


def test_the_projection_survives_the_cache():
    attempt = Attempt(0, 8192, ok=True, peak_rss_bytes=203 * MiB, full_context_rss_bytes=353 * MiB)
    back = ProbeResult.from_dict(ProbeResult(Recommendation(0, 8192), [attempt], None).to_cache())
    assert back.attempts[0].full_context_rss_bytes == 353 * MiB
