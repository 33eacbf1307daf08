""""Find safe settings" while the first test load runs: a busy bar and a sentence of what is happening, never an
empty bar that looks stuck; the bar counts loads once one was measured."""

from __future__ import annotations

import threading

from app.core.launch.config import LaunchConfig
from app.core.probe import ProbeProgress, ProbeResult, Recommendation
from app.core.probe.attempt import Attempt
from app.core.text import T
from app.ui import workers
from app.ui.steps.settings import probe_box as probe_module
from tests.ui.steps.settings.probe_session import probe_box
from tests.unit.core.plan.test_plan import make_info

WAIT_MS = 10_000


def _step(number: int, last: Attempt | None = None) -> ProbeProgress:
    return ProbeProgress(number, 6, "layers", 0, 1024, T(f"Test load {number} of at most 6…", "…"), last)


def test_the_bar_is_busy_until_the_first_load_is_measured(qtbot, monkeypatch):
    first_told, measured, finish = threading.Event(), threading.Event(), threading.Event()

    def slow_probe(info, config, hardware, progress, cancel, max_context=False):  # a worker thread
        progress(_step(1))
        first_told.set()
        measured.wait(WAIT_MS / 1000)
        progress(_step(2, Attempt(gpu_layers=0, ctx=1024, ok=True, peak_rss_bytes=1)))
        finish.wait(WAIT_MS / 1000)
        return ProbeResult(Recommendation(gpu_layers=0, ctx=1024), [], None)

    monkeypatch.setattr(probe_module, "probe_call", slow_probe)
    info = make_info(ctx_train=1024)
    box = probe_box(qtbot, info, LaunchConfig(model=info.path, ctx=1024))
    box.show()
    try:
        box.run()
        qtbot.waitUntil(lambda: box.status.text().startswith("Test load 1"), timeout=WAIT_MS)
        assert first_told.is_set() and box.job.progress.isVisible()
        assert (box.job.progress.minimum(), box.job.progress.maximum()) == (0, 0)  # Qt's busy bar, not an empty one
        measured.set()
        qtbot.waitUntil(lambda: box.status.text().startswith("Test load 2"), timeout=WAIT_MS)
        assert (box.job.progress.maximum(), box.job.progress.value()) == (6, 1)
    finally:
        measured.set()
        finish.set()
        qtbot.waitUntil(lambda: not box.running, timeout=WAIT_MS)
        qtbot.waitUntil(lambda: workers.active_count() == 0, timeout=WAIT_MS)
