"""Recover and the test question against the real llama-server (issue 14): the server killed mid-answer comes back
with its last good settings and the question is answered again — timed; the checklist's test question is a real
request to the running server."""

from __future__ import annotations

import os
import signal

from app.core.chat.client import ChatClient
from app.core.chat.conversation import ANSWERED
from app.core.chat.params import ChatParams
from app.core.chat.session import DELTA, ChatSession
from app.core.presenter.preflight import ask_test_question
from app.core.presenter.recover import recover
from app.core.server.events import State


def test_recover_brings_the_server_back_and_answers_the_question_again(running_server, tmp_path, request):
    supervisor = running_server("llama-server", supervisor_kwargs={"auto_restart": False})
    good = supervisor.last_good_config
    assert good is not None and good.ctx == supervisor.config.ctx
    client = ChatClient(lambda: supervisor.url, backend="llama-server", api_key=supervisor.api_key)
    request.addfinalizer(client.close)  # its pooled connection: left open, a later test reports the socket
    seconds, problem = ask_test_question(client)
    assert problem is None and 0 < seconds < 10, (seconds, problem)

    session = ChatSession(client, params=ChatParams(max_tokens=200), directory=tmp_path)
    for event in session.send("Tell me about the sea."):
        if event.kind == DELTA:
            os.kill(supervisor.pid, signal.SIGKILL)  # the demo dies mid-answer
            break
    assert supervisor.wait_for({State.FAILED, State.CRASHED}, 30) in (State.FAILED, State.CRASHED)
    supervisor.set_config(good.with_changes(ctx=good.ctx * 2))  # a stray change after the last good start
    result = recover(supervisor, session)
    assert result.problem is None and result.answered and result.asked_again == "Tell me about the sea."
    assert supervisor.config.ctx == good.ctx  # back to the settings that worked
    assert session.conversation.pending_message() is None
    assert [m.status for m in session.conversation.messages if m.role == "user"] == [ANSWERED]
    print(f"Recover: ready in {result.ready_seconds:.2f} s, question answered again after {result.total_seconds:.2f} s")
    assert result.total_seconds < 30
