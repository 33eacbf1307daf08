"""Twenty kills, bounded (issue 14): the real llama-server is SIGKILLed 20 times while a scripted chat runs, each
time as an answer streams. Every death is diagnosed; the supervisor restarts it, or stops after a crash loop and
the test presses Restart as a user would; afterwards no server process is left, and no chat message is lost:
every question is answered, in the conversation and in its saved file."""

from __future__ import annotations

import os
import signal
import time

import psutil

from app.core.chat.client import ChatClient
from app.core.chat.conversation import ANSWERED, COMPLETE, load_conversation
from app.core.chat.params import ChatParams
from app.core.chat.session import DELTA, DONE, ChatSession
from app.core.server.policy import CRASH_LOOP
from app.core.server.supervisor import State, Supervisor

KILLS = 20
READY_S = 60


def _settled(states: list[State], before: int) -> None:
    """Wait until the supervisor has settled (READY or FAILED) since the kill. The crash event comes before the
    state leaves READY, so wait_for() alone could return the READY of the server just killed, and the resend then
    found nothing answering."""
    deadline = time.monotonic() + READY_S
    while sum(s in (State.READY, State.FAILED) for s in states) <= before and time.monotonic() < deadline:
        time.sleep(0.05)


def _ready(supervisor: Supervisor, recoveries: list[int]) -> None:
    """READY again: by the automatic restart, or by Restart after a crash-loop stop."""
    state = supervisor.wait_for({State.READY, State.FAILED}, READY_S)
    if state is State.FAILED:
        recoveries.append(supervisor.pid or 0)
        supervisor.restart()
        state = supervisor.wait_for({State.READY, State.FAILED}, READY_S)
    assert state is State.READY, (state, supervisor.last_diagnosis, supervisor.tail(15))


def _kill_mid_answer(session: ChatSession, supervisor: Supervisor, text: str) -> tuple[int, bool]:
    """Ask, and SIGKILL the server as soon as the answer starts streaming: (the pid killed, whether mid-answer)."""
    pid = supervisor.pid
    mid_answer = False
    for event in session.send(text):
        if event.kind == DELTA and not mid_answer:
            os.kill(pid, signal.SIGKILL)
            mid_answer = True
    if not mid_answer:  # answered before a single delta could be seen: kill it between turns instead
        os.kill(pid, signal.SIGKILL)
    return pid, mid_answer


def test_twenty_kills_lose_nothing(server_config, tmp_path):
    config = server_config("llama-server", ctx=512)
    supervisor = Supervisor(config, backoff_s=(0.1,), max_crashes=3, crash_window_s=60)
    crashes = []
    supervisor.subscribe(lambda e: crashes.append(e) if e.kind == "crash" else None)
    states: list[State] = []
    supervisor.subscribe(lambda e: states.append(e.state) if e.kind == "state" else None)
    client = ChatClient(lambda: supervisor.url, backend="llama-server", api_key=supervisor.api_key)
    session = ChatSession(client, params=ChatParams(max_tokens=200), directory=tmp_path)
    recoveries: list[int] = []
    pids: list[int] = []
    mid_answer = 0
    started = time.monotonic()
    try:
        supervisor.start()
        _ready(supervisor, recoveries)
        for i in range(KILLS):
            settled_before = sum(s in (State.READY, State.FAILED) for s in states)
            pid, during = _kill_mid_answer(session, supervisor, f"Question {i}: tell me a story.")
            pids.append(pid)
            mid_answer += during
            deadline = time.monotonic() + 30
            while len(crashes) <= i and time.monotonic() < deadline:  # the death is noticed and diagnosed
                time.sleep(0.05)
            _settled(states, settled_before)
            _ready(supervisor, recoveries)
            if session.conversation.pending_message() is not None:  # asked again once the server is back
                kinds = [event.kind for event in session.resend_pending()]
                assert kinds[-1] == DONE, kinds
    finally:
        client.close()  # its pooled connection: left open, a later test reports the socket
        supervisor.close()
    elapsed = time.monotonic() - started
    print(f"{KILLS} kills ({mid_answer} mid-answer) in {elapsed:.1f} s: {len(crashes)} crashes diagnosed, "
          f"{supervisor.restart_count} restarts, {len(recoveries)} crash-loop stops recovered with Restart")

    assert len(crashes) == KILLS and all(e.payload.diagnosis.cause for e in crashes)
    # killed by the test with memory to spare: said so, and no setting was changed for it
    assert {e.payload.diagnosis.cause for e in crashes} <= {"killed_from_outside", "stopped_externally"}
    assert supervisor.config.ctx == config.ctx
    assert mid_answer >= KILLS // 2, mid_answer  # most deaths cut an answer that was streaming
    assert recoveries, "3 deaths in a minute must stop the automatic restarts at least once"
    assert any(getattr(e.payload, "reason", None) == CRASH_LOOP for e in supervisor.history if e.state is State.FAILED)
    assert not any(psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE for pid in pids)
    assert not [p for p in psutil.Process().children(recursive=True) if "llama-server" in " ".join(p.cmdline())]

    users = [m for m in session.conversation.messages if m.role == "user"]
    assert [m.content for m in users] == [f"Question {i}: tell me a story." for i in range(KILLS)]
    assert all(m.status == ANSWERED for m in users), [m.status for m in users]
    answers = [m for m in session.conversation.messages if m.role == "assistant" and m.status == COMPLETE]
    assert len(answers) >= KILLS
    saved = load_conversation(session.conversation.id, tmp_path)
    assert [(m.role, m.content, m.status) for m in saved.messages] == \
        [(m.role, m.content, m.status) for m in session.conversation.messages]
