"""``ChatSession.stop()`` between asking for an answer and iterating it is kept (the GUI iterates on a worker)."""

from __future__ import annotations

from app.core.chat import ChatSession
from app.core.chat.session import DONE


class NoServer:
    """Any use of the client means the stop was lost."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)

        def call(*_args, **_kwargs):
            raise AssertionError(f"a stopped answer called client.{name}")

        return call


def test_a_stop_before_the_first_next_stops_the_answer(tmp_path):
    session = ChatSession(NoServer(), directory=tmp_path)
    events = session.send("hello")  # asked for on one thread ...
    session.stop()  # ... stopped before the worker started it
    outcome = list(events)
    assert [(e.kind, e.stats.finish_reason) for e in outcome] == [(DONE, "stopped")]
    assert session.conversation.pending_message().content == "hello"  # kept, ready to re-send


def test_a_stop_of_an_earlier_answer_does_not_stop_the_next_one(tmp_path):
    session = ChatSession(NoServer(), directory=tmp_path)
    session.stop()  # nothing was streaming
    events = session.send("hello")
    try:
        next(iter(events))
    except AssertionError as error:  # the new answer went on to ask the server
        assert "client.server_info" in str(error)
    else:
        raise AssertionError("the new answer was stopped by a stop that came before it was asked for")
