"""The external llama-server engine through the window: exact command line, start, ready, stop."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.ui.conftest import LONG, open_and_wait, wait_for_plan
from tests.ui.own_port import use_a_port_of_its_own

SERVER = 180_000


def test_llama_server_backend_from_the_advanced_settings(qtbot, window, tiny_model, llama_server_bin):
    open_and_wait(qtbot, window, tiny_model)
    wait_for_plan(qtbot, window)
    panel = window.settings_panel
    panel.advanced_box.set_expanded(True)
    panel.advanced.backend.setCurrentIndex(1)
    panel.advanced.server_bin.setText(llama_server_bin)
    panel.advanced.server_bin.editingFinished.emit()
    panel.ctx.setValue(1024)
    qtbot.waitUntil(lambda: panel.command.text().startswith(llama_server_bin) and panel.wait_idle(), timeout=LONG)
    command = panel.command.text()
    assert f"-m {tiny_model}" in command or f"--model {tiny_model}" in command
    assert "-c 1024" in command or "--ctx-size 1024" in command
    use_a_port_of_its_own(qtbot, window)  # a port of its own, not 8080 another test process may hold
    qtbot.mouseClick(window.server.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.server.state == "ready", timeout=SERVER)
    assert window.bridge.supervisor.backend.kind == "llama-server"
    qtbot.mouseClick(window.server.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.server.state == "stopped", timeout=LONG)
