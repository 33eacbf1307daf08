"""Closing asks first only while a reply is being written; then it stops the reply and the server."""

from __future__ import annotations

import psutil
import pytest
from PySide6.QtCore import Qt

from tests.ui.conftest import LONG, open_and_wait, wait_for_plan
from tests.ui.own_port import use_a_port_of_its_own

pytestmark = pytest.mark.slow  # every test here starts a real server from the window
SERVER = 180_000


def test_close_while_streaming_asks_and_a_no_keeps_everything_running(qtbot, window, make_model, monkeypatch):
    model = make_model("chatty.gguf", n_layers=4, n_embd=128, n_ff=256, n_extra_tokens=16000, f16=True)
    open_and_wait(qtbot, window, model)
    wait_for_plan(qtbot, window)
    window.settings_panel.ctx.setValue(2048)
    qtbot.waitUntil(lambda: window.chat_tab.pane is not None and window.settings_panel.wait_idle(), timeout=LONG)
    use_a_port_of_its_own(qtbot, window)  # a port of its own, not 8080 another test process may hold
    qtbot.mouseClick(window.server.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.server.state == "ready", timeout=SERVER)
    pid = window.bridge.supervisor.pid
    chat = window.chat_tab.pane
    chat.params_box.max_tokens.setValue(1500)
    assert chat.send("Tell me everything.")
    qtbot.waitUntil(lambda: chat._reply_entry is not None and len(chat._reply_entry.content) > 0, timeout=SERVER)

    asked = []
    monkeypatch.setattr(window, "_confirm_close", lambda: asked.append("no") or False)
    window.close()
    assert asked == ["no"] and window.isVisible() and window._close_state == "open"
    assert psutil.pid_exists(pid)

    monkeypatch.setattr(window, "_confirm_close", lambda: asked.append("yes") or True)
    if chat.is_streaming():
        window.close()
        assert asked == ["no", "yes"]
    else:  # the reply ended on its own in between: closing no longer needs to ask
        window.close()
    qtbot.waitUntil(lambda: window._close_state == "done", timeout=SERVER)
    assert not chat.is_streaming()
    proc_gone = not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert proc_gone
