"""Wiring a ChatClient to a supervisor: per-slot context and "is this a crash the supervisor saw?"."""

from __future__ import annotations

import time
from types import SimpleNamespace

from app.core.chat.hooks import ctx_per_slot, recent_crash
from app.core.launch_config import LaunchConfig
from app.core.supervisor_events import Event, State


def test_llama_server_divides_context_between_slots():
    assert ctx_per_slot(LaunchConfig(model="m", backend="llama-server", ctx=8192, parallel=4)) == 2048
    assert ctx_per_slot(LaunchConfig(model="m", backend="embedded", ctx=8192, parallel=4)) == 8192


def test_recent_crash_only_counts_crashes_since_the_server_was_last_ready():
    diagnosis = SimpleNamespace(cause="killed")
    supervisor = SimpleNamespace(state=State.RESTARTING, last_diagnosis=diagnosis, history=[
        Event.now("state", State.READY), Event.now("crash", State.CRASHED, diagnosis=diagnosis),
        Event.now("state", State.RESTARTING)])
    assert recent_crash(supervisor) is diagnosis
    supervisor.history.append(Event.now("state", State.READY))
    supervisor.state = State.READY
    assert recent_crash(supervisor) is None
    old = Event("crash", time.time() - 3600, State.CRASHED, {"diagnosis": diagnosis})
    assert recent_crash(SimpleNamespace(state=State.LOADING, last_diagnosis=diagnosis, history=[old])) is None
