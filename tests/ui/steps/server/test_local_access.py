"""The Server step shows other programs on this computer the address and the key (masked, with Copy) of the ready
server; the copied key is the one the server wants."""

from __future__ import annotations

import httpx
import pytest
from PySide6.QtGui import QGuiApplication

from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.server.supervisor import Supervisor
from app.ui.steps.server.local_access import LocalAccessBox
from app.ui.steps.server.supervisor_bridge import SupervisorBridge
from tests.ui.steps.server.wiring import wired_panel

READY_MS = 90_000
CHAT = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2}


def _texts(widget) -> str:
    from PySide6.QtWidgets import QLabel, QLineEdit

    return " ".join(w.text() for kind in (QLabel, QLineEdit) for w in widget.findChildren(kind))


@pytest.mark.slow  # a real embedded server
def test_the_ready_server_shows_its_address_and_a_masked_key_to_copy(qtbot, tiny_model):
    supervisor = Supervisor(LaunchConfig(model=str(tiny_model), backend="embedded", ctx=256, threads=1,
                                         port=find_free_port()))
    bridge = SupervisorBridge(supervisor)
    panel, _control = wired_panel(bridge)
    qtbot.addWidget(panel)
    try:
        assert not panel.local_access.isVisibleTo(panel)
        panel.start_button.click()
        qtbot.waitUntil(lambda: panel.state == "ready", timeout=READY_MS)
        box = panel.local_access
        key = supervisor.api_key
        assert box.isVisibleTo(panel) and box.address.text() == f"{supervisor.url}/v1"
        assert key not in _texts(panel) and box.key.text().startswith(key[:4]) and "\u2022" in box.key.text()
        box.copy_key.click()
        copied = QGuiApplication.clipboard().text()
        assert copied == key
        url = f"{supervisor.url}/v1/chat/completions"
        assert httpx.post(url, json=CHAT, timeout=60).status_code == 401
        assert httpx.post(url, json=CHAT, headers={"Authorization": f"Bearer {copied}"}, timeout=60).status_code == 200
        panel.stop_button.click()
        qtbot.waitUntil(lambda: panel.state == "stopped", timeout=30_000)
        assert not box.isVisibleTo(panel)
    finally:
        bridge.close()
        bridge.wait_for_actions()
        supervisor.close()


def test_without_a_key_the_box_says_any_program_can_connect(qtbot):
    box = LocalAccessBox()
    qtbot.addWidget(box)
    box.show_server("http://127.0.0.1:8080", None)
    assert not box.key.isVisibleTo(box) and not box.copy_key.isVisibleTo(box)
    assert "No key needed" in box.note.text() and box.address.text() == "http://127.0.0.1:8080/v1"
