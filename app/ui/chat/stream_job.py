"""Consume a ChatSession's event iterator on a pool thread; events reach the GUI thread as they come."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator

from app.core.chat import ChatSession
from app.ui.chat.context_meter import ContextUse
from app.ui.workers import Task, run_task

Start = Callable[[ChatSession], Iterator[Any]]


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
    except Exception:  # the server is gone: show what we know without the size
        ctx = None
    counter = session.counter
    return ContextUse(
        used=fit.prompt_tokens + completion_tokens, ctx=ctx, budget=fit.budget,
        dropped_messages=fit.dropped_messages, estimate=bool(counter is not None and counter.is_estimate),
    )


def _consume(session: ChatSession, start: Start, progress: Callable[[Any], None]) -> StreamOutcome:
    completion_tokens = 0
    for event in start(session):
        if event.kind == "done" and event.stats is not None:
            completion_tokens = event.stats.completion_tokens
        progress(event)
    pending = session.conversation.pending_message() is not None
    return StreamOutcome(_measure(session, completion_tokens), pending)


def start_stream(session: ChatSession, start: Start, *, on_event: Callable[[Any], None],
                 on_done: Callable[[StreamOutcome], None], on_error: Callable[[BaseException], None]) -> Task:
    """``start(session)`` returns the iterator (``session.send(text)`` or ``session.resend_pending()``);
    it is called on the worker thread, because ``send`` saves the conversation to disk first."""
    return run_task(lambda progress: _consume(session, start, progress), wants_progress=True,
                    on_progress=on_event, on_done=on_done, on_error=on_error)
