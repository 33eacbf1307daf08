"""Presenter mode (issue 14): on, the settings are locked, the chat takes the window with a larger font, the screen
is kept awake where the desktop allows, Recover shows, and the checklist runs; off, everything is as before. With a
real server: the checklist's test question is answered, and Recover after a kill mid-answer brings the server back
with the last good settings and asks the question again."""

from __future__ import annotations

import os
import signal

import pytest

from app.core.problem import Status
from tests.ui.conftest import LONG, open_and_wait, wait_for_plan
from tests.ui.own_port import use_a_port_of_its_own

SERVER = 180_000


def _checks(qtbot, window) -> dict:
    presenter = window.presenter
    qtbot.waitUntil(lambda: presenter.dialog is not None and presenter.dialog.run_button.isEnabled()
                    and bool(presenter.checks), timeout=LONG)
    return {check.id: check for check in presenter.checks}


def test_presenter_mode_locks_enlarges_and_checks(qtbot, window, tiny_model):
    open_and_wait(qtbot, window, tiny_model)
    wait_for_plan(qtbot, window)
    qtbot.waitUntil(lambda: window.chat_tab.pane is not None, timeout=LONG)
    size = window.chat_tab.pane.transcript.font().pointSizeF()
    window.menus.command_actions["presenter"].trigger()
    presenter = window.presenter
    assert presenter.active and window.menus.command_actions["presenter"].isChecked()
    assert not window.settings_panel.isEnabled() and not window.model.isEnabled()
    assert not window.left_scroll.isVisible() and window.server.recover_button.isVisible()
    assert window.chat_tab.pane.transcript.font().pointSizeF() == pytest.approx(size * 1.6)
    checks = _checks(qtbot, window)
    assert checks["model"].status is Status.OK
    assert window.settings_panel.config().backend == "llama-server"  # the default engine
    assert checks["engine"].status is Status.OK  # its real engine check, kept for the file a start would run
    assert checks["server"].status is Status.ERROR and "Start it now" in checks["server"].next_step.render("en")
    assert checks["awake"].status is (Status.OK if presenter.awake else Status.WARNING)
    assert presenter.dialog.isVisible() and len(presenter.dialog.rows.rows) == 9

    window.menus.command_actions["presenter"].trigger()
    assert not presenter.active and window.settings_panel.isEnabled() and window.left_scroll.isVisible()
    assert not window.server.recover_button.isVisible() and not presenter.dialog.isVisible()
    assert window.chat_tab.pane.transcript.font().pointSizeF() == pytest.approx(size) and not presenter.awake


@pytest.mark.slow  # a real server: the test question, a kill mid-answer, Recover
def test_recover_after_a_kill_mid_answer(qtbot, built_in_engine, window, tiny_model):  # its slower answer is cut
    open_and_wait(qtbot, window, tiny_model)
    wait_for_plan(qtbot, window)
    use_a_port_of_its_own(qtbot, window)  # Recover restarts on the same port: another test's server may take 8080
    window.server.start_button.click()
    qtbot.waitUntil(lambda: window.server.state == "ready", timeout=SERVER)
    qtbot.waitUntil(lambda: window.chat_tab.pane is not None, timeout=LONG)
    window.presenter.set_active(True)
    checks = _checks(qtbot, window)
    assert checks["server"].status is Status.OK and checks["answer"].status is Status.OK, checks["answer"].message

    chat, supervisor = window.chat_tab.pane, window.bridge.supervisor
    # Long enough to be cut: a 200-token answer once ended (~3 s after it was asked) before this test's GUI thread,
    # off the CPU, got to the kill: no question was left to ask again. 1500 tokens of this engine take 4-11 s here
    # (tests/integration/chat/test_stream.py measures them).
    chat.params_box.max_tokens.setValue(1500)
    assert chat.send("Tell me a long story.")
    qtbot.waitUntil(lambda: chat._reply_entry is not None and len(chat._reply_entry.content) > 3, timeout=SERVER)
    assert chat.is_streaming()  # else the kill below would not be "mid-answer"
    supervisor.crash_policy.auto_restart = False  # the demo stays down until the presenter presses Recover
    os.kill(supervisor.pid, signal.SIGKILL)
    qtbot.waitUntil(lambda: window.server.state == "failed", timeout=LONG)
    qtbot.waitUntil(lambda: not chat.is_streaming(), timeout=LONG)
    assert chat.session.conversation.pending_message() is not None
    with qtbot.waitSignal(chat.replyFinished, timeout=SERVER):  # the question, answered again after Recover
        window.server.recover_button.click()
        qtbot.waitUntil(lambda: "Recovered in" in window.statusBar().currentMessage(), timeout=SERVER)
        assert "asked again" in window.statusBar().currentMessage()
        print(window.statusBar().currentMessage())
    assert chat.session.conversation.pending_message() is None and window.server.state == "ready"
    window.presenter.set_active(False)
