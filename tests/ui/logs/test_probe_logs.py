"""Find safe settings: each test load's server log reaches the Logs tab once, under a line naming the load."""

from __future__ import annotations

from app.core.probe import Attempt, ProbeProgress
from app.core.text import T


def _step(last: Attempt | None, phase: str = "layers") -> ProbeProgress:
    return ProbeProgress(2, 8, phase, 10, 4096, T("Test load 2…", "第 2 次测试加载…"), last)


def test_each_probe_attempt_log_reaches_the_logs_tab_once(qtbot, window):
    box = window.settings_panel.probe
    first = Attempt(12, 4096, ok=True, load_seconds=1.5, peak_rss_bytes=1 << 30,
                    log_lines=("srv  load_model: loading model", "main: server is listening"))
    failed = Attempt(20, 4096, cause="request", reason=T("The model loaded, but ...", "模型已加载，但……"),
                     log_lines=("ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer",))
    with qtbot.waitSignals([box.logLines, box.logLines]):
        box._on_progress(_step(first))
        box._on_progress(_step(first))  # the same attempt again: not logged twice
        box._on_progress(_step(failed, phase="done"))
        box._on_progress(_step(Attempt(0, 256)))  # a cached run's attempts carry no log lines
    window.tabs.setCurrentIndex(window.tabs.indexOf(window.lazy_logs.placeholder))
    shown = window.logs.shown_lines()
    assert shown[0].startswith("==== 12 GPU layers, 4096 tokens — works")
    assert shown[1:3] == ["srv  load_model: loading model", "main: server is listening"]
    assert shown[3].startswith("==== 20 GPU layers") and shown[4].endswith("failed to allocate CUDA0 buffer")
    assert len(shown) == 5
