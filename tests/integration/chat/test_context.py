"""The context guard against both real servers on a 512-token context: trim, retry once, plain errors,
and the five-round self-test that overflows the naive history and still passes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from app.core.chat import errors
from app.core.chat.classify import ContextOverflow
from app.core.chat.client import ChatClient
from app.core.chat.params import ChatParams
from app.core.chat.selftest import run_selftest
from app.core.chat.session import DONE, ERROR, TRIMMED, ChatSession
from tests.integration.chat.test_harness import BACKENDS, LLAMA_SERVER, start_server

CTX = 512


@pytest.fixture(scope="module", params=BACKENDS)
def server(request, tiny_model, tmp_path_factory):
    directory = tmp_path_factory.mktemp("chat-context")
    server_bin = request.getfixturevalue("llama_server_bin") if request.param == LLAMA_SERVER else None
    running = start_server(request.param, tiny_model, CTX, directory, server_bin)
    yield running
    running.stop()


@pytest.fixture
def client(server):
    client = ChatClient(server.url, ctx_per_slot=CTX, log_tail=server.log_tail)
    yield client
    client.close()


def long_history(session: ChatSession, turns: int, size: int) -> None:
    for n in range(turns):
        session.conversation.add("user", f"question {n} " + "q" * size, "answered")
        session.conversation.add("assistant", f"answer {n} " + "a" * size, "complete")


def test_server_reports_overflow_with_numbers(server, client):
    too_long = [{"role": "user", "content": "x" * 2000}]
    with pytest.raises(ContextOverflow) as caught:
        list(client.stream(too_long, ChatParams(max_tokens=8)))
    assert caught.value.n_ctx == CTX and caught.value.n_prompt_tokens > CTX


def test_undercounted_history_overflows_then_is_trimmed_and_retried_invisibly(server, client):
    session = ChatSession(client, params=ChatParams(seed=1, max_tokens=16), save=False)
    long_history(session, turns=6, size=120)
    list(session.send("warm up"))  # calibrates the counter, then we break it on purpose
    real_count = session.counter.count_text
    session.counter.count_text = lambda text: real_count(text) // 4  # the guard now under-counts 4x
    events = list(session.send("and now?"))
    kinds = [e.kind for e in events]
    assert ERROR not in kinds, [e.error.to_dict() for e in events if e.error]
    assert kinds[-1] == DONE and events[-1].stats.retried_after_overflow
    assert session.conversation.messages[-1].status == "complete"


def test_trims_oldest_turns_and_says_so(server, client):
    session = ChatSession(client, params=ChatParams(seed=2, max_tokens=16), save=False)
    long_history(session, turns=5, size=100)
    events = list(session.send("latest question"))
    trimmed = [e for e in events if e.kind == TRIMMED]
    assert events[-1].kind == DONE, [e.error.to_dict() for e in events if e.error]
    assert trimmed and "earlier messages are no longer sent to the model" in trimmed[0].notice.render("en")
    assert not events[-1].stats.retried_after_overflow
    sent = session.last_fit.messages
    assert sent[-1]["content"] == "latest question" and sent[0]["content"].startswith("question ")


def test_single_message_too_long_is_a_plain_error(server, client):
    session = ChatSession(client, params=ChatParams(max_tokens=64), save=False)
    events = list(session.send("y" * 3000))
    error = events[-1].error
    assert events[-1].kind == ERROR and error.kind == errors.CONTEXT_TOO_LONG
    assert str(error.details["budget_tokens"]) in error.message.render("en")
    assert str(error.details["message_tokens"]) in error.message.render("en")
    assert error.details["message_tokens"] > 3000 // 2
    assert session.conversation.pending_message().content == "y" * 3000


def test_five_round_selftest_on_ctx_512_passes(server, client):
    report = run_selftest(client, rounds=5)
    assert report.passed, [r.error for r in report.rounds]
    assert report.naive_overflowed and len(report.rounds) == 6
    assert any(r.trimmed_messages for r in report.rounds)
    assert all(r.prompt_tokens <= CTX for r in report.rounds)
    assert report.rounds[-1].kind == "long"


def test_selftest_command_exits_0(server):
    done = subprocess.run([sys.executable, "-m", "app", "selftest", "--url", server.url, "--ctx", str(CTX),
                           "--rounds", "5", "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["passed"] and report["naive_overflowed"] and report["backend"] == server.backend


def test_selftest_command_starts_the_model_under_the_supervisor(tiny_model, llama_server_bin):
    done = subprocess.run([sys.executable, "-m", "app", "selftest", str(tiny_model), "--backend", "llama-server",
                           "--server-bin", llama_server_bin, "--ctx", str(CTX), "--rounds", "5"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("[ok  ]") == 6 and "Self-test passed" in done.stdout
    assert "older turns were trimmed" in done.stdout


def test_selftest_command_usage_errors_exit_2():
    done = subprocess.run([sys.executable, "-m", "app", "selftest"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "MODEL" in done.stderr
