""""Find safe settings" straight after opening a model, and cancelling it (real test loads)."""

from __future__ import annotations

import psutil
import pytest
from PySide6.QtCore import Qt

from tests.ui.conftest import LONG, open_and_wait, wait_for_plan

SERVER = 180_000


def _probe_children() -> list[psutil.Process]:
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if "llama_cpp" in " ".join(child.cmdline()) and child.status() != psutil.STATUS_ZOMBIE:
                found.append(child)
        except psutil.Error:
            pass
    return found


@pytest.mark.slow  # the probe loads the model in real test servers
def test_probe_runs_right_after_opening_a_model(qtbot, window, make_model):
    model = make_model("short.gguf", ctx_train=1024)
    open_and_wait(qtbot, window, model)
    wait_for_plan(qtbot, window)
    probe = window.settings_panel.probe
    assert probe.run_button.isEnabled()
    qtbot.mouseClick(probe.run_button, Qt.MouseButton.LeftButton)
    assert probe.running and probe.job.cancel_button.isVisible()
    qtbot.waitUntil(lambda: not probe.running, timeout=SERVER)
    assert probe.result is not None and probe.result.recommendation.ctx == 1024, probe.status.text()


def test_cancelling_the_probe_leaves_settings_and_no_test_server(qtbot, window, make_model):
    model = make_model("cancel.gguf", ctx_train=2048)
    open_and_wait(qtbot, window, model)
    wait_for_plan(qtbot, window)
    panel = window.settings_panel
    before = panel.config()
    qtbot.mouseClick(panel.probe.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(_probe_children()), timeout=SERVER)  # a test load is under way
    qtbot.mouseClick(panel.probe.job.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not panel.probe.running, timeout=SERVER)
    assert panel.probe.status.text() == "Cancelled. Your settings were not changed."
    assert panel.config() == before
    qtbot.waitUntil(lambda: not _probe_children(), timeout=LONG)
