"""The chat follows the model through the real window: a base model's server stopped, then an instruct model opened,
and the chat no longer says "Text completion"."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.ui.conftest import LONG, open_and_wait, wait_for_plan
from tests.ui.own_port import use_a_port_of_its_own

pytestmark = pytest.mark.slow  # a real server starts from the window
SERVER = 180_000


def test_text_completion_line_goes_when_the_base_models_server_stops(qtbot, window, make_model, tiny_model):
    base = make_model("base.gguf", chat_template=False)
    open_and_wait(qtbot, window, base)
    wait_for_plan(qtbot, window)
    qtbot.waitUntil(lambda: window.chat_tab.pane is not None, timeout=LONG)
    use_a_port_of_its_own(qtbot, window)  # a port of its own, not 8080 another test process may hold
    qtbot.mouseClick(window.server.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.server.state == "ready", timeout=SERVER)
    note = window.chat_tab.pane.mode_note
    assert note.isVisible() and note.text().startswith("Text completion")
    qtbot.mouseClick(window.server.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.server.state == "stopped", timeout=SERVER)
    open_and_wait(qtbot, window, tiny_model)  # an instruct model (it has a chat template)
    assert window.model.report.usable
    assert not note.isVisible()
