"""A probe result is one object: its cache and profile dicts read back with ProbeResult.from_dict."""

from __future__ import annotations

import time

from app.core.probe import ProbeOptions, ProbeResult, Recommendation, cache
from app.core.probe.attempt import Attempt
from app.core.text import T


def _result() -> ProbeResult:
    attempts = [Attempt(0, 4096, ok=False, cause="oom_killed", reason=T("Out of memory.", "内存不足。"),
                        peak_rss_bytes=7_000_000_000, seconds=3.5),
                Attempt(0, 2048, ok=True, peak_rss_bytes=4_000_000_000, seconds=2.0, load_seconds=1.5)]
    return ProbeResult(Recommendation(gpu_layers=0, ctx=2048), attempts, None, wall_seconds=5.5,
                       backend={"kind": "llama-server"}, notes=[T("Only the context was measured.", "只测了上下文。")],
                       plan_dict={"verdict": "fits"})


def test_the_cache_form_reads_back_with_both_languages():
    original = _result()
    back = ProbeResult.from_dict(original.to_cache())
    assert back.recommendation == Recommendation(0, 2048) and back.recommendation.changes() == {
        "gpu_layers": 0, "ctx": 2048, "n_cpu_moe": 0}  # the placement the passing loads had, experts included
    assert [(a.gpu_layers, a.ctx, a.ok, a.cause) for a in back.attempts] == [(0, 4096, False, "oom_killed"),
                                                                             (0, 2048, True, None)]
    assert back.attempts[0].reason.render("zh") == "内存不足。" and back.notes[0].render("zh") == "只测了上下文。"
    assert back.passing_attempt is back.attempts[1] and back.plan_dict == {"verdict": "fits"}
    assert back.summary().render("en") == original.summary().render("en")


def test_the_profile_form_and_an_old_profile_with_an_injected_saved_at_read_back():
    original = _result()
    stored = original.to_dict("en")
    assert stored["recommendation"] == {"gpu_layers": 0, "ctx": 2048, "n_cpu_moe": 0} and stored["saved_at"] is None
    old_profile = {**stored, "saved_at": 1_700_000_000.0}  # how the window used to save it
    back = ProbeResult.from_dict(old_profile)
    assert back.saved_at == 1_700_000_000.0 and back.recommendation == original.recommendation
    assert back.attempts[0].reason.render("en") == "Out of memory." and back.wall_seconds == 5.5


def test_an_unreadable_recommendation_is_none_not_a_crash():
    assert Recommendation.from_dict({"gpu_layers": "x", "ctx": 1}) is None
    assert Recommendation.from_dict({"ctx": 1}) is None and Recommendation.from_dict(None) is None
    assert ProbeResult.from_dict({"recommendation": {"ctx": "?"}, "saved_at": "yesterday"}).saved_at is None


def test_the_cache_stamps_saved_at_when_it_stores_a_result():
    result = _result()
    before = time.time()
    cache.save_result({"k": 1}, result)
    assert result.saved_at is not None and before <= result.saved_at <= time.time()
    stored = cache.load_cached({"k": 1})
    assert ProbeResult.from_dict(stored).saved_at == result.saved_at


def test_probe_options_default_to_what_the_window_uses():
    options = ProbeOptions()
    assert options.use_cache and options.seeded and options.ram_budget is None and options.load_timeout_s == 600.0


def test_the_summary_says_plainly_when_no_graphics_memory_was_used_or_measured():
    cpu = _result().summary()
    assert "no graphics memory used" in cpu.render("en") and "未使用显存" in cpu.render("zh")
    assert "VRAM" not in cpu.render("en") and " -" not in cpu.render("en")
    on_gpu = ProbeResult(Recommendation(gpu_layers=12, ctx=4096), [Attempt(12, 4096, ok=True, peak_rss_bytes=1 << 30)],
                         None)
    assert "graphics memory" not in on_gpu.summary().render("en") and "-;" not in on_gpu.summary().render("en")
    measured = ProbeResult(Recommendation(gpu_layers=12, ctx=4096),
                           [Attempt(12, 4096, ok=True, peak_rss_bytes=1 << 30, peak_vram_bytes=3 << 30)], None)
    assert "peak graphics memory 3.0 GiB" in measured.summary().render("en")
    assert "显存峰值 3.0 GiB" in measured.summary().render("zh")
