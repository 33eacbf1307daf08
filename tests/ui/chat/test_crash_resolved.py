"""After a crash the server is Ready again: the transcript's crash sentences say they were solved."""

from __future__ import annotations

from app.core.chat import errors
from app.core.server.events import State
from app.ui.chat.chat_pane import ChatPane


def test_crash_errors_are_marked_solved_when_the_server_is_ready_again(qtbot):
    pane = ChatPane()
    qtbot.addWidget(pane)
    crash = errors.server_crashed("r1", None)
    pane.transcript.add_error(crash)
    pane.transcript.add_error(errors.too_slow("r2", 120))  # not a crash: still a warning afterwards
    before = pane.transcript.plain_text()
    assert before.count("⚠") == 2
    pane.set_server_state(State.RESTARTING, {})
    assert pane.transcript.plain_text() == before
    pane.set_server_state(State.READY, {})
    after = pane.transcript.plain_text()
    assert after.count("⚠") == 1 and "The server sent nothing for 120 s." in after
    assert crash.message.render("en") in after and "Solved: the server is running again." in after
    assert crash.next_step.render("en") not in after  # its next step no longer applies


def test_a_solved_crash_no_longer_says_running_again_once_the_server_is_stopped(qtbot):
    pane = ChatPane()
    qtbot.addWidget(pane)
    crash = errors.server_crashed("r1", None)
    pane.transcript.add_error(crash)
    pane.set_server_state(State.READY, {})
    pane.set_server_state(State.STOPPING, {})
    pane.set_server_state(State.STOPPED, {})
    after = pane.transcript.plain_text()
    assert "running again" not in after
    assert crash.message.render("en") in after and "Solved then; the server has been stopped since." in after
