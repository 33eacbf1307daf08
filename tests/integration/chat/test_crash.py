"""The server dies mid-answer: the user sees the crash diagnosis (not a network error), keeps the partial
answer and the question, and the conversation continues after a restart. And a conversation file survives
its writer being killed with SIGKILL at any moment."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest

from app.core.chat import errors
from app.core.chat.client import ChatClient
from app.core.chat.conversation import (
    ANSWERED,
    COMPLETE,
    INTERRUPTED,
    PENDING,
    conversations_dir,
    list_conversations,
    load_conversation,
)
from app.core.chat.params import ChatParams
from app.core.chat.session import DELTA, DONE, ERROR, ChatSession
from app.core.diagnosis import diagnose
from tests.integration.chat.test_harness import ASCII_ONLY, BACKENDS, LLAMA_SERVER, start_server

NO_EOS = ASCII_ONLY  # random weights: ASCII only, no end-of-text until max_tokens


@pytest.fixture(params=BACKENDS)
def backend_and_bin(request):
    server_bin = request.getfixturevalue("llama_server_bin") if request.param == LLAMA_SERVER else None
    return request.param, server_bin


def test_server_killed_mid_stream_is_a_crash_and_the_chat_continues(backend_and_bin, tiny_model, tmp_path):
    backend, server_bin = backend_and_bin
    server = start_server(backend, tiny_model, 2048, tmp_path, server_bin)
    crash_info = lambda: (diagnose(server.proc.returncode, server.log_tail(50), was_ready=True)  # noqa: E731
                          if server.proc.poll() is not None else None)
    client = ChatClient(server.url, ctx_per_slot=2048, crash_info=crash_info, log_tail=server.log_tail)
    session = ChatSession(client, params=ChatParams(seed=7, max_tokens=1500, extra=NO_EOS))
    received = ""
    try:
        events = []
        for event in session.send("Tell me everything."):
            events.append(event)
            if event.kind == DELTA:
                received += event.text
                if len(events) == 5:
                    os.kill(server.proc.pid, signal.SIGKILL)
        error = events[-1].error
        assert events[-1].kind == ERROR and error.kind == errors.SERVER_CRASHED, events[-1]
        assert error.diagnosis is not None and error.diagnosis.cause == "killed"
        assert error.message == error.diagnosis.message
        saved = load_conversation(session.conversation.id)
        assert [(m.role, m.status) for m in saved.messages] == [("user", PENDING), ("assistant", INTERRUPTED)]
        assert saved.messages[1].content == received and received

        restarted = start_server(backend, tiny_model, 2048, tmp_path, server_bin, port=server.port)
        server = restarted
        session.conversation.params = session.params.with_changes(max_tokens=8)
        events = list(session.resend_pending())
        assert events[-1].kind == DONE, [e.error.to_dict() for e in events if e.error]
        saved = load_conversation(session.conversation.id)
        assert [(m.role, m.status) for m in saved.messages] == [
            ("user", ANSWERED), ("assistant", INTERRUPTED), ("assistant", COMPLETE)]
        assert [m["role"] for m in saved.history_for_model()] == ["user", "assistant"]
    finally:
        client.close()
        server.stop()


WRITER = """
import itertools, sys
from app.core.chat.conversation import Conversation, save_conversation
conversation = Conversation(id="kill-test")
for n in itertools.count():
    conversation.add("user", f"question {n} " + "q" * 3000, "answered")
    conversation.add("assistant", f"answer {n} " + "a" * 3000, "complete")
    save_conversation(conversation)
    if n == 0:
        print("saving", flush=True)
"""


def test_conversation_file_is_intact_after_kill_9_of_its_writer():
    rng = random.Random(5)
    seen_counts = []
    for _ in range(5):
        with subprocess.Popen([sys.executable, "-c", WRITER], stdout=subprocess.PIPE, text=True,
                              cwd=os.getcwd()) as writer:  # its pipe closed when it is gone
            try:
                assert writer.stdout.readline().strip() == "saving"
                time.sleep(rng.uniform(0.05, 0.4))
            finally:
                writer.send_signal(signal.SIGKILL)
        conversation = load_conversation("kill-test")  # parses: never half-written
        roles = [m.role for m in conversation.messages]
        assert roles and roles == ["user", "assistant"] * (len(roles) // 2)
        assert conversation.messages[-1].content.startswith(f"answer {len(roles) // 2 - 1} ")
        seen_counts.append(len(roles))
    assert max(seen_counts) > 2  # it really was killed while saving over and over
    assert [item["id"] for item in list_conversations()] == ["kill-test"]
    assert conversations_dir().is_dir()
