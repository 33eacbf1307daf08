"""Wiring a ChatClient to a supervisor: per-slot context and "is this a crash the supervisor saw?"."""

from __future__ import annotations

import time
from types import SimpleNamespace

from app.core.chat.hooks import ctx_per_slot, recent_crash
from app.core.launch.config import LaunchConfig
from app.core.server.events import Crashed, Event, State, StateChanged


def test_llama_server_divides_context_between_slots():
    assert ctx_per_slot(LaunchConfig(model="m", backend="llama-server", ctx=8192, parallel=4)) == 2048
    assert ctx_per_slot(LaunchConfig(model="m", backend="embedded", ctx=8192, parallel=4)) == 8192


def test_recent_crash_only_counts_crashes_since_the_server_was_last_ready():
    diagnosis = SimpleNamespace(cause="killed")
    supervisor = SimpleNamespace(state=State.RESTARTING, last_diagnosis=diagnosis, history=[
        Event.now(State.READY, StateChanged(State.READY, 0)),
        Event.now(State.CRASHED, Crashed(1, -9, "SIGKILL", diagnosis)),
        Event.now(State.RESTARTING, StateChanged(State.RESTARTING, 0))])
    assert recent_crash(supervisor) is diagnosis
    supervisor.history.append(Event.now(State.READY, StateChanged(State.READY, 0)))
    supervisor.state = State.READY
    assert recent_crash(supervisor) is None
    old = Event(time.time() - 3600, State.CRASHED, Crashed(1, -9, "SIGKILL", diagnosis))
    assert recent_crash(SimpleNamespace(state=State.LOADING, last_diagnosis=diagnosis, history=[old])) is None


def test_crash_report_waits_for_the_diagnosis_of_a_child_that_is_already_gone():
    import threading

    from app.core.chat.hooks import crash_report

    diagnosis = SimpleNamespace(cause="killed")
    child = SimpleNamespace(running=False, stop_requested=False)
    supervisor = SimpleNamespace(state=State.READY, last_diagnosis=None, child=child,
                                 history=[Event.now(State.READY, StateChanged(State.READY, 0))])

    def report_late() -> None:  # the report comes a while after the child is gone, as on a busy machine
        time.sleep(0.2)  # four of crash_report's 50 ms polls: it must have waited to see it
        supervisor.last_diagnosis = diagnosis
        supervisor.history.append(Event.now(State.CRASHED, Crashed(1, -9, "SIGKILL", diagnosis)))

    threading.Thread(target=report_late, daemon=True).start()
    assert crash_report(supervisor, wait_s=30.0) is diagnosis


def test_crash_report_does_not_wait_while_the_child_runs_or_was_asked_to_stop():
    from app.core.chat.hooks import crash_report

    for child in (SimpleNamespace(running=True, stop_requested=False),
                  SimpleNamespace(running=False, stop_requested=True)):
        supervisor = SimpleNamespace(state=State.READY, last_diagnosis=None, child=child,
                                     history=[Event.now(State.READY, StateChanged(State.READY, 0))])
        started = time.monotonic()
        assert crash_report(supervisor, wait_s=30.0) is None
        assert time.monotonic() - started < 5.0


def test_the_supervisor_is_what_the_chat_needs_and_so_is_a_small_stand_in():
    from app.core.chat.hooks import ChatServer
    from app.core.server.supervisor import Supervisor

    supervisor = Supervisor(LaunchConfig(model="m.gguf"))
    try:
        assert isinstance(supervisor, ChatServer)  # every member the chat asks for, on the concrete class
    finally:
        supervisor.close()
    stand_in = SimpleNamespace(url="http://127.0.0.1:1", config=LaunchConfig(model="m"), state=State.READY,
                               child=None, history=[], last_diagnosis=None, last_good_config=None,
                               tail=lambda n=200: [])
    assert isinstance(stand_in, ChatServer)
    assert not isinstance(SimpleNamespace(url="x"), ChatServer)


def test_the_client_is_told_the_context_of_the_server_that_runs_not_of_the_next_start():
    from app.core.chat.hooks import client_for_supervisor, running_config

    running = LaunchConfig(model="m", backend="embedded", ctx=4096)
    supervisor = SimpleNamespace(url="http://127.0.0.1:9", config=running, state=State.READY, child=None, history=[],
                                 last_diagnosis=None, last_good_config=running, tail=lambda n=200: [])
    client = client_for_supervisor(supervisor)
    try:
        assert client.told_ctx() == 4096
        supervisor.config = running.with_changes(ctx=2048)  # set for the next start (Settings edited, a fix)
        assert running_config(supervisor) is running and client.told_ctx() == 4096  # the server still runs 4096
        supervisor.state = State.LOADING  # restarting with it
        assert client.told_ctx() == 2048
        supervisor.state, supervisor.last_good_config = State.READY, supervisor.config
        assert client.told_ctx() == 2048
    finally:
        client.close()
