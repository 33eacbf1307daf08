"""A Stop that comes before the worker has started the reply still stops it (found as a teardown hang under load).

The pane asked for an answer, then Stop (or a closing window, or a test's teardown) called ``session.stop()``
while the pool had not yet started the job. The answer used to clear the stop flag when its iterator began, so
that stop was lost and the reply ran to max tokens: 60 s and more on a busy machine. Here the job is held at a
gate until after Stop, which is the slow-machine order made certain.
"""

from __future__ import annotations

import threading

from app.core.chat import ChatParams
from app.ui import workers
from app.ui.chat import stream_job
from app.ui.chat.chat_pane import ChatPane


class UntouchableClient:
    """A chat client that fails the test if the stopped answer reaches the server at all."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.closed = False

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)

        def call(*_args, **_kwargs):
            self.asked.append(name)
            raise AssertionError(f"the stopped answer still called client.{name}()")

        return call

    def close(self) -> None:
        self.closed = True


def test_stop_before_the_worker_starts_stops_the_reply(qtbot, monkeypatch):
    gate = threading.Event()
    real_run_task = stream_job.run_task

    def gated_run_task(fn, *args, **kwargs):
        def held(*a, **k):
            assert gate.wait(10), "the test never opened the gate"
            return fn(*a, **k)

        return real_run_task(held, *args, **kwargs)

    monkeypatch.setattr(stream_job, "run_task", gated_run_task)
    client = UntouchableClient()
    pane = ChatPane()
    try:
        pane.set_client(client)
        pane.params_box.set_params(ChatParams(max_tokens=1_500))
        finished = []
        pane.replyFinished.connect(finished.append)
        assert pane.send("A long story, please.")
        assert pane.is_streaming()
        pane.stop()  # before the worker ran a single line of the reply
        gate.set()
        qtbot.waitUntil(lambda: not pane.is_streaming(), timeout=10_000)
        assert client.asked == []
        assert [stats.finish_reason for stats in finished] == ["stopped"]
        assert pane.session.conversation.pending_message() is not None  # nothing came back: still re-sendable
        assert pane.resend_button.isVisibleTo(pane) or not pane.isVisible()
    finally:
        gate.set()
        qtbot.waitUntil(lambda: workers.active_count() == 0, timeout=10_000)
        pane.shutdown()
        pane.deleteLater()
