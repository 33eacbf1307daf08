"""Recover, the presenter's one button: the server back with the last settings that reached READY, and the question
that was being answered when it died asked again — timed, so the closing note can say how long a stage pause is."""

from __future__ import annotations

import time
from dataclasses import dataclass

from app.core.server.events import State
from app.core.text import T, Text

READY_WITHIN_S = 120.0


@dataclass(frozen=True)
class RecoverResult:
    ready_seconds: float | None  # from the click to READY
    total_seconds: float  # to READY and the question answered again (or to the failure)
    asked_again: str | None = None  # the question sent again, if one was waiting
    answered: bool = False
    problem: Text | None = None


def recover(supervisor, session=None, *, ready_within_s: float = READY_WITHIN_S) -> RecoverResult:
    """Restart ``supervisor`` with its last good settings (READY before), then re-send ``session``'s pending
    question (a core ChatSession), if any. Blocking: call it off the GUI thread."""
    started = time.monotonic()
    if supervisor.last_good_config is not None:
        supervisor.set_config(supervisor.last_good_config)
    supervisor.restart()
    state = supervisor.wait_for({State.READY, State.FAILED}, ready_within_s)
    ready = time.monotonic() - started
    if state is not State.READY:
        diagnosis = supervisor.last_diagnosis
        problem = diagnosis.message if diagnosis is not None else T("The server did not come back.",
                                                                    "服务器没有恢复。")
        return RecoverResult(None, ready, problem=problem)
    pending = session.conversation.pending_message() if session is not None else None
    if session is None or pending is None:
        return RecoverResult(ready, ready)
    from app.core.chat.session import DONE, ERROR

    for event in session.resend_pending():
        if event.kind == ERROR and event.error is not None:
            return RecoverResult(ready, time.monotonic() - started, pending.content, problem=event.error.message)
        if event.kind == DONE:
            return RecoverResult(ready, time.monotonic() - started, pending.content, answered=True)
    return RecoverResult(ready, time.monotonic() - started, pending.content)
