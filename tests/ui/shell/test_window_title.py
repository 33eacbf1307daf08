"""Issue 25, item 3: the window title agrees with the Model step. With the server stopped, the title names the
model the Model step shows, not the last server's."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.ui.conftest import open_and_wait, wait_for_plan
from tests.ui.own_port import use_a_port_of_its_own

SERVER = 180_000


@pytest.mark.slow  # starts a real server from the window
def test_title_follows_the_model_step_once_the_server_is_stopped(qtbot, window, tiny_model, make_model):
    open_and_wait(qtbot, window, tiny_model)
    wait_for_plan(qtbot, window)
    use_a_port_of_its_own(qtbot, window)  # a port of its own, not 8080 another test process may hold
    qtbot.mouseClick(window.server.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.server.state == "ready", timeout=SERVER)
    assert window.windowTitle() == "tiny.gguf — Ready — GGUF Launcher"
    qtbot.mouseClick(window.server.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.server.state == "stopped", timeout=SERVER)
    assert window.windowTitle() == "tiny.gguf — Stopped — GGUF Launcher"  # the model shown is the one that ran
    other = make_model("second.gguf", n_layers=3)
    open_and_wait(qtbot, window, other)
    assert window.windowTitle() == "second.gguf — GGUF Launcher"
