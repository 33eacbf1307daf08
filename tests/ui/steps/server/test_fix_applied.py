"""A crash card whose fix was applied says so and turns its button off (issue 22: after "Apply fix and restart" the
card kept its title and an active button).

A real llama-server under a real memory cap (RLIMIT_DATA) cannot allocate what 8192 tokens need; the real
diagnosis offers a smaller context; the button applies it through the real supervisor, and the server that comes
up reports the new context itself (``/props``)."""

from __future__ import annotations

import resource

import httpx
from PySide6.QtCore import Qt

from app.core.server.events import State
from app.core.server.supervisor import Supervisor
from app.core.synthetic.tiny_llama import write_tiny_llama
from app.ui.steps.server.crash_card import APPLIED, APPLYING
from app.ui.steps.server.supervisor_bridge import SupervisorBridge
from tests.integration.probe.test_probe_cpu import KV_PER_TOKEN, KV_SPEC, load_once, server_config
from tests.ui.steps.server.wiring import wired_panel

SERVER_MS = 180_000  # model loads on 2 busy cores


def test_an_applied_fix_is_said_on_the_card_and_its_button_is_off(qtbot, tmp_path, llama_server_bin):
    model = write_tiny_llama(tmp_path / "kv-heavy.gguf", KV_SPEC)
    ok, vm_data = load_once(server_config(model, llama_server_bin, 1024), None)
    assert ok and vm_data > 0
    cap = vm_data + 5120 * KV_PER_TOKEN  # room for ~6144 tokens: 8192 cannot be allocated, half of it can
    supervisor = Supervisor(server_config(model, llama_server_bin, 8192), auto_restart=False,
                            rlimits={resource.RLIMIT_DATA: cap}, ready_timeout_s=120)
    bridge = SupervisorBridge(supervisor)
    panel, _control = wired_panel(bridge, with_settings=False)
    qtbot.addWidget(panel)
    panel.show()  # a click reaches only a shown button
    card = panel.crash_card
    try:
        bridge.start()
        qtbot.waitUntil(lambda: card.isVisibleTo(panel) and card.has_fix(), timeout=SERVER_MS)
        fix = card.action()[1]
        assert card.diagnosis.cause.endswith("out_of_memory") and 1024 <= fix.get("ctx", 0) < 8192, card.diagnosis
        assert card.apply_button.isEnabled() and card.title.text() != ""
        assert card.fix_changes.text() == f"The fix changes: Context size: 8192 → {fix['ctx']}"

        qtbot.mouseClick(card.apply_button, Qt.MouseButton.LeftButton)
        assert card.applied == APPLYING and not card.apply_button.isEnabled()
        assert card.title.text() == f"Applying the fix (Context size: 8192 → {fix['ctx']}); the server is restarting."
        qtbot.waitUntil(lambda: panel.state is State.READY, timeout=SERVER_MS)

        assert card.applied == APPLIED and not card.apply_button.isEnabled()
        assert card.title.text() == f"Applied: Context size: 8192 → {fix['ctx']}; the server is running again."
        assert not card.fix_changes.isVisibleTo(card)  # "The fix changes: …" is history now
        props = httpx.get(supervisor.url + "/props", timeout=30,
                          headers={"Authorization": f"Bearer {supervisor.api_key}"}).json()
        assert props["default_generation_settings"]["n_ctx"] == fix["ctx"]  # the server says it runs the fix
    finally:
        bridge.close()
        supervisor.close()
