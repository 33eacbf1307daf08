"""A probe still running when another model is opened: its late answer is dropped, never shown or kept for the
new model (its profile would have remembered the old model's measurement)."""

from __future__ import annotations

import threading

from app.core.launch.config import LaunchConfig
from app.core.probe import ProbeResult, Recommendation
from app.ui import workers
from app.ui.steps.settings import probe_box as probe_module
from tests.ui.steps.settings.probe_session import open_model, probe_box
from tests.unit.core.plan.test_plan import make_info

WAIT_MS = 20_000


def test_a_result_for_the_model_the_session_left_is_dropped(qtbot, monkeypatch):
    asked, answer = threading.Event(), threading.Event()

    def slow_probe(info, config, hardware, progress, cancel, max_context=False):  # a worker thread
        asked.set()
        answer.wait(WAIT_MS / 1000)  # answers even though it was cancelled: a run that was already done
        return ProbeResult(Recommendation(gpu_layers=0, ctx=1024), [], None)

    monkeypatch.setattr(probe_module, "probe_call", slow_probe)
    first = make_info(ctx_train=1024, path="/models/first.gguf")
    box = probe_box(qtbot, first, LaunchConfig(model=first.path, ctx=1024))
    finished = []
    box.finished.connect(finished.append)
    box.run()
    qtbot.waitUntil(asked.is_set, timeout=WAIT_MS)
    second = make_info(ctx_train=1024, path="/models/second.gguf")
    open_model(box.session, second, LaunchConfig(model=second.path, ctx=1024))
    box.show_model()
    answer.set()
    qtbot.waitUntil(lambda: workers.active_count() == 0 and not box.running, timeout=WAIT_MS)
    qtbot.wait(50)  # the worker's answer is delivered through the event loop
    assert finished == [] and box.result is None and box.session.probe is None
    assert box.status.text().startswith("Not measured yet.")
