"""A port taken by another program: said plainly, and one click fixes it (real embedded server)."""

from __future__ import annotations

import socket

import pytest
from PySide6.QtCore import Qt

from tests.ui.conftest import LONG, open_and_wait, wait_for_plan

pytestmark = pytest.mark.slow  # every test here starts a real server from the window
SERVER = 180_000


def _busy_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    return sock


def test_busy_port_crash_card_then_apply_fix_starts_on_a_free_port(qtbot, window, tiny_model):
    busy = _busy_socket()
    port = busy.getsockname()[1]
    try:
        open_and_wait(qtbot, window, tiny_model)
        wait_for_plan(qtbot, window)
        advanced = window.settings_panel.advanced
        advanced.port.setValue(port)
        advanced.pick_free_port.setCurrentIndex(1)  # "stop with an error": show the problem, do not dodge it
        assert window.settings_panel.config().port == port
        qtbot.mouseClick(window.server.start_button, Qt.MouseButton.LeftButton)
        card = window.server.crash_card
        qtbot.waitUntil(lambda: card.isVisible() and card.diagnosis is not None, timeout=SERVER)
        assert card.diagnosis.cause == "port_in_use", card.diagnosis
        assert str(port) in card.problem.message.text()
        assert card.apply_button.isVisible()
        qtbot.waitUntil(card.apply_button.isEnabled, timeout=LONG)
        qtbot.mouseClick(card.apply_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: window.server.state == "ready", timeout=SERVER)
        assert window.bridge.supervisor.config.port != port
        assert advanced.pick_free_port.currentIndex() == 0  # the fix is reflected in the Settings step
        shown, running = window.settings_panel.config(), window.bridge.supervisor.config
        # one config: the supervisor runs what the Settings step shows, only the free port was settled at start and
        # the server's own key added (made by the supervisor, never shown in the Settings step)
        assert running.api_key and shown.api_key is None
        assert running.with_changes(port=shown.port, model=shown.model, api_key=None) == shown
    finally:
        busy.close()


def test_busy_port_with_default_settings_moves_to_a_free_port_and_says_so(qtbot, window, tiny_model):
    busy = _busy_socket()
    port = busy.getsockname()[1]
    try:
        open_and_wait(qtbot, window, tiny_model)
        wait_for_plan(qtbot, window)
        window.settings_panel.advanced.port.setValue(port)
        qtbot.mouseClick(window.server.start_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: window.server.state == "ready", timeout=SERVER)
        assert window.bridge.supervisor.config.port != port
        assert f"Port {port} is in use" in window.statusBar().currentMessage()
    finally:
        busy.close()
