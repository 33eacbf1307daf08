"""The whole window after "Apply fix and restart" (issue 22): every place that spoke of the old settings follows
the server that runs now — the crash card, the status bar, the chat's meter.

The server is the real llama-server, started by the window itself; a real kernel memory limit (RLIMIT_DATA) stands
for a computer with less memory, so that the server cannot allocate what 8192 tokens need and the real diagnosis
offers a smaller context. The limit is set where the window builds its supervisor, nothing else is replaced."""

from __future__ import annotations

import resource

import pytest
from PySide6.QtCore import Qt

from app.core.server.events import State
from app.core.server.supervisor import Supervisor
from app.core.synthetic.tiny_llama import write_tiny_llama
from app.ui.steps.server import server_control
from app.ui.steps.server.crash_card import APPLIED
from tests.integration.chat.test_harness import ASCII_ONLY
from tests.integration.probe.test_probe_cpu import KV_PER_TOKEN, KV_SPEC, load_once
from tests.ui.conftest import LONG, open_and_wait, wait_for_plan
from tests.ui.own_port import use_a_port_of_its_own

SERVER = 180_000  # ms: model loads on 2 busy cores
START_CTX = 8192


@pytest.fixture
def capped_supervisors(monkeypatch):
    """The window's supervisors run their server under ``cap[0]`` bytes of data segment (set by the test)."""
    cap: list[int] = []
    monkeypatch.setattr(server_control, "_make_supervisor",
                        lambda config: Supervisor(config, rlimits={resource.RLIMIT_DATA: cap[0]}))
    return cap


def test_after_the_fix_the_card_status_bar_and_meter_speak_of_the_running_server(
        qtbot, window, tmp_path, llama_server_bin, capped_supervisors):
    model = write_tiny_llama(tmp_path / "kv-heavy.gguf", KV_SPEC)
    report = open_and_wait(qtbot, window, model)
    assert report.usable
    panel = window.settings_panel
    wait_for_plan(qtbot, window)
    panel.apply_changes({"backend": "llama-server", "server_bin": llama_server_bin, "ctx": START_CTX, "threads": 1,
                         "batch": 128, "ubatch": 128})
    use_a_port_of_its_own(qtbot, window)  # the restart with the fix keeps the port: another test may take 8080
    config = panel.config()
    assert config.ctx == START_CTX and config.backend == "llama-server"
    ok, vm_data = load_once(config.with_changes(ctx=1024), None)  # what this server needs at 1024 tokens
    assert ok and vm_data > 0
    capped_supervisors.append(vm_data + 5120 * KV_PER_TOKEN)  # room for ~6144 tokens: 8192 does not fit

    # Start: the KV cache cannot be allocated; the card offers a smaller context
    qtbot.waitUntil(lambda: window.server.start_button.isEnabled(), timeout=LONG)
    qtbot.mouseClick(window.server.start_button, Qt.MouseButton.LeftButton)
    card = window.server.crash_card
    qtbot.waitUntil(lambda: card.isVisible() and card.has_fix(), timeout=SERVER)
    new_ctx = card.action()[1].get("ctx", START_CTX)
    assert card.diagnosis.cause.endswith("out_of_memory") and new_ctx < START_CTX, card.diagnosis

    # Apply fix and restart: the status bar says what happens, never "keeps its settings until you press Restart".
    # Click once the button is laid out: a click on a button shown a moment ago, with no height yet, misses (seen
    # once under a full suite run: the status bar stayed empty)
    button = card.apply_button
    qtbot.waitUntil(lambda: button.isVisible() and button.isEnabled() and button.height() > 0, timeout=LONG)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    status = window.statusBar()
    assert status.currentMessage() == "The fix is in the settings now; the server restarts with them."
    assert not card.apply_button.isEnabled()
    qtbot.waitUntil(lambda: window.server.state is State.READY, timeout=SERVER)
    assert card.applied == APPLIED and not card.apply_button.isEnabled()
    assert card.title.text() == f"Applied: Context size: {START_CTX} → {new_ctx}; the server is running again."
    assert panel.config().ctx == new_ctx and window.bridge.supervisor.last_good_config.ctx == new_ctx
    assert "keeps its settings" not in status.currentMessage()

    # the chat measures against the running server's context
    qtbot.waitUntil(lambda: window.chat_tab.pane is not None, timeout=LONG)
    chat = window.chat_tab.pane
    chat.params_box.set_params(chat.params_box.params().with_changes(max_tokens=8, seed=1, extra=ASCII_ONLY))
    with qtbot.waitSignal(chat.replyFinished, timeout=SERVER) as finished:
        assert chat.send("Hello.")
    qtbot.waitUntil(lambda: not chat.is_streaming() and chat.meter.use is not None, timeout=SERVER)
    assert finished.args[0].n_ctx == new_ctx
    assert chat.meter.summary.text().endswith(f"of {new_ctx} tokens used")

    # an edit while it runs: now the status bar's sentence is true, and says so
    panel.apply_changes({"ctx": new_ctx // 2})
    assert status.currentMessage() == "The server keeps its settings until you press Restart."
