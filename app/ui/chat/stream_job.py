"""Consume a ChatSession's event iterator on a pool thread; events reach the GUI thread as they come."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from app.core.chat import ChatEvent, ChatSession
from app.ui.chat.context_meter import ContextUse
from app.ui.workers import Task, run_task

Start = Callable[[ChatSession], Iterator[ChatEvent]]


@dataclass(frozen=True)
class StreamOutcome:
    """What the GUI needs once the iterator is exhausted (measured on the worker thread)."""

    context: ContextUse | None
    pending: bool  # the user's message still waits for an answer (can be re-sent)


def _measure(session: ChatSession, completion_tokens: int) -> ContextUse | None:
    fit = session.last_fit
    if fit is None:
        return None
    try:
        ctx = session.client.server_info().ctx_per_slot  # cached; after a crash this asks the server again
    except Exception:  # noqa: BLE001 - the server is gone: show what we know without the size
        ctx = None
    counter = session.counter
    return ContextUse(
        used=fit.prompt_tokens + completion_tokens, ctx=ctx, budget=fit.budget,
        dropped_messages=fit.dropped_messages, estimate=bool(counter is not None and counter.is_estimate),
    )


def _consume(session: ChatSession, events: Iterator[ChatEvent], progress: Callable[[ChatEvent], None]) -> StreamOutcome:
    completion_tokens = 0
    for event in events:
        if event.kind == "done" and event.stats is not None:
            completion_tokens = event.stats.completion_tokens
        progress(event)
    pending = session.conversation.pending_message() is not None
    return StreamOutcome(_measure(session, completion_tokens), pending)


def start_stream(session: ChatSession, start: Start, *, on_event: Callable[[ChatEvent], None],
                 on_done: Callable[[StreamOutcome], None], on_error: Callable[[BaseException], None]) -> Task:
    """``start(session)`` returns the iterator (``session.send(text)`` or ``session.resend_pending()``).

    It is called here, on the GUI thread, so the answer is asked for before this returns: a ``session.stop()``
    right after (Stop clicked, a window closing) reaches that answer even when the worker has not started yet.
    The iterator (which saves the conversation, then streams) runs on the worker."""
    events = start(session)
    return run_task(lambda progress: _consume(session, events, progress), wants_progress=True,
                    on_progress=on_event, on_done=on_done, on_error=on_error)
