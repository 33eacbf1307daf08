"""Opening another model while a server runs asks; Restart stops the old server and runs the new model."""

from __future__ import annotations

import psutil
import pytest
from PySide6.QtCore import Qt

from tests.ui.conftest import LONG, open_and_wait, wait_for_plan
from tests.ui.own_port import save_a_port_of_its_own, use_a_port_of_its_own

pytestmark = pytest.mark.slow  # every test here starts a real server from the window
SERVER = 180_000


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_restart_after_opening_another_model_switches_servers(qtbot, window, tiny_model, make_model):
    other = make_model("second.gguf", n_layers=3)
    save_a_port_of_its_own(window, other)  # the switch starts its server on its saved settings' port, not 8080
    open_and_wait(qtbot, window, tiny_model)
    wait_for_plan(qtbot, window)
    use_a_port_of_its_own(qtbot, window)  # a port of its own, not 8080 another test process may hold
    qtbot.mouseClick(window.server.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.server.state == "ready", timeout=SERVER)
    first = window.bridge.supervisor
    first_pid = first.pid

    open_and_wait(qtbot, window, other)
    wait_for_plan(qtbot, window)
    assert window.server.state == "ready"  # the running server is not touched until the user answers
    qtbot.waitUntil(lambda: window.model_switch.box is not None, timeout=LONG)
    assert window.model_switch.box.text() == f"The server is still running {tiny_model.name}. Restart it with " \
        "second.gguf?"
    window.model_switch.buttons["restart"].click()  # the question's Restart: the new model's settings
    qtbot.waitUntil(lambda: window.bridge.supervisor not in (None, first) and window.server.state == "ready",
                    timeout=SERVER)
    assert window.bridge.supervisor.config.model == str(other)
    assert _gone(first_pid) and first.state.value == "stopped"
    assert window.control._retired == []
    qtbot.waitUntil(lambda: window.logs.shown_line_count() > 0, timeout=LONG)
    assert window.windowTitle() == "second.gguf — Ready — GGUF Launcher"
