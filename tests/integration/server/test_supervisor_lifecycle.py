"""Real servers, both backends: start -> ready -> chat -> stop, and SIGKILL -> diagnosis -> auto-restart -> ready."""

from __future__ import annotations

import os
import signal

import httpx
import psutil
import pytest

from app.core.server.supervisor import State

BACKENDS = ("embedded", "llama-server")


def chat_once(supervisor) -> dict:
    """One chat request as the app's own clients send it: with the server's key."""
    response = httpx.post(f"{supervisor.url}/v1/chat/completions", timeout=60,
                          headers={"Authorization": f"Bearer {supervisor.api_key}"}, json={
        "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "temperature": 0})
    assert response.status_code == 200, response.text
    return response.json()


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.parametrize("backend", BACKENDS)
def test_start_ready_chat_stop(backend, running_server):
    supervisor = running_server(backend)
    states = [event.state for event in supervisor.history if event.kind == "state"]
    assert states[0] is State.STARTING and states[-1] is State.READY
    ready = supervisor.history[-1]
    assert ready.payload.pid == supervisor.pid and ready.payload.url == supervisor.url
    assert supervisor.load_seconds is not None and supervisor.load_seconds < 60

    reply = chat_once(supervisor)
    assert reply["choices"][0]["message"]["role"] == "assistant"

    pid = supervisor.pid
    assert any(line.stream in ("stdout", "stderr") for line in supervisor.tail())
    supervisor.stop()
    assert supervisor.state is State.STOPPED and supervisor.pid is None
    assert gone(pid)
    assert not [event for event in supervisor.history if event.kind == "crash"]
    log_text = supervisor.log.path.read_text(encoding="utf-8")
    assert "[stderr]" in log_text or "[stdout]" in log_text
    assert "state ready" in log_text


@pytest.mark.parametrize("backend", BACKENDS)
def test_killed_child_is_diagnosed_and_restarted(backend, running_server):
    supervisor = running_server(backend)
    crashes = []
    supervisor.subscribe(lambda event: crashes.append(event) if event.kind == "crash" else None)
    first_pid = supervisor.pid

    os.kill(first_pid, signal.SIGKILL)
    assert supervisor.wait_for({State.RESTARTING, State.FAILED}, 10) is State.RESTARTING
    assert supervisor.wait_for({State.READY, State.FAILED}, 60) is State.READY

    assert len(crashes) == 1
    crash = crashes[0].to_dict("en")
    assert crash["pid"] == first_pid and crash["exit_code"] == -9 and crash["signal"] == "SIGKILL"
    assert crash["diagnosis"]["cause"] == "killed_from_outside", crash["diagnosis"]  # the test had memory to spare
    assert "stopped from outside while memory was fine" in crash["diagnosis"]["message"]
    assert crash["diagnosis"]["fix"] == {}
    assert supervisor.restart_count == 1 and supervisor.last_diagnosis.cause == crash["diagnosis"]["cause"]
    assert supervisor.pid not in (None, first_pid)
    chat_once(supervisor)  # the restarted child really serves (and was not killed with its spawning thread)
    snapshot = supervisor.snapshot("en")
    assert snapshot["state"] == "ready" and snapshot["restart_count"] == 1
    assert snapshot["last_diagnosis"]["cause"] == crash["diagnosis"]["cause"]
    assert supervisor.history[-1].payload.restart_count == 1
    assert [e.kind for e in supervisor.history if e.kind in ("crash", "restart")] == ["crash", "restart"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_listening_beyond_this_computer_requires_the_generated_key(backend, running_server):
    supervisor = running_server(backend, host="0.0.0.0", api_key=None)
    key = supervisor.config.api_key
    assert key and supervisor.url.startswith("http://127.0.0.1:")
    starting = next(e for e in supervisor.history if e.state is State.STARTING)
    notes = " ".join(note.render("en") for note in starting.payload.notes)
    assert "other computers can reach it" in notes and key not in notes and key[:4] + "\u2022" in notes  # masked
    assert httpx.get(f"{supervisor.url}/v1/models", timeout=10).status_code == 401
    allowed = httpx.get(f"{supervisor.url}/v1/models", headers={"Authorization": f"Bearer {key}"}, timeout=10)
    assert allowed.status_code == 200
