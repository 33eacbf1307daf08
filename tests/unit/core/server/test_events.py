"""Typed supervisor events: one payload class per kind, and the JSON ``serve --json`` prints, key for key."""

from __future__ import annotations

import json

from app.core.diagnosis.value import Diagnosis
from app.core.problem import change_settings
from app.core.process.child_log import LogLine
from app.core.server.events import (
    Crashed,
    Event,
    EventKind,
    LogEvent,
    MemoryLevel,
    OffloadShort,
    PlannedRestart,
    Restarting,
    State,
    StateChanged,
)
from app.core.server.watchdog import Level, MemoryReading
from app.core.text import T

DIAGNOSIS = Diagnosis("oom_killed", T("Out of memory.", "内存不足。"), T("Use less.", "少用。"),
                      action=change_settings({"ctx": 2048}), evidence=("Killed",), exit_code=-9, signal="SIGKILL")


def test_each_payload_names_its_kind_which_is_the_json_event_key():
    assert [kind.value for kind in EventKind] == ["state", "crash", "restart", "planned_restart", "offload", "memory",
                                                  "vram", "log"]
    event = Event(1.0, State.CRASHED, Crashed(5, -9, "SIGKILL", DIAGNOSIS))
    assert event.kind is EventKind.CRASH and event.kind == "crash"
    assert Event(1.0, State.READY, LogEvent(LogLine(1.0, "stderr", "x"))).kind is EventKind.LOG


def test_state_events_print_the_keys_that_state_always_printed_in_the_same_order():
    def keys(change: StateChanged) -> list[str]:
        return list(Event(1.0, change.state, change).to_dict())

    head = ["event", "time", "state"]
    assert keys(StateChanged(State.STARTING, 0, command_line="x", backend={})) == [
        *head, "command_line", "notes", "backend", "restart_count"]
    assert keys(StateChanged(State.READY, 0, pid=1, url="u", load_seconds=1.0)) == [
        *head, "pid", "url", "load_seconds", "restart_count"]
    assert keys(StateChanged(State.STOPPED, 0)) == [*head, "exit_code", "restart_count"]  # exit_code null is said
    assert keys(StateChanged(State.FAILED, 0, diagnosis=DIAGNOSIS)) == [*head, "diagnosis", "restart_count"]
    assert keys(StateChanged(State.FAILED, 1, diagnosis=DIAGNOSIS, reason="crash_loop")) == [
        *head, "diagnosis", "reason", "restart_count"]
    assert keys(StateChanged(State.CRASHED, 1, pid=5, exit_code=-9, diagnosis=DIAGNOSIS)) == [
        *head, "pid", "exit_code", "diagnosis", "restart_count"]


def test_other_events_print_their_fields_as_before():
    reading = MemoryReading(1, 2, "system")
    line = json.dumps(Event(1.0, State.CRASHED, Crashed(5, -9, "SIGKILL", DIAGNOSIS)).to_dict("en"))
    assert line.startswith('{"event": "crash", "time": 1.0, "state": "crashed", "pid": 5, "exit_code": -9, '
                           '"signal": "SIGKILL", "diagnosis": {"cause": "oom_killed", "message": "Out of memory."')
    assert Event(1.0, State.RESTARTING, Restarting(2, 1.5)).to_dict() == {
        "event": "restart", "time": 1.0, "state": "restarting", "attempt": 2, "delay_s": 1.5}
    memory = Event(1.0, State.READY, MemoryLevel(Level.WARNING, reading, T("Short.", "紧张。"))).to_dict("en")
    assert list(memory) == ["event", "time", "state", "level", "reading", "sentence"]
    assert memory["level"] == "warning" and memory["sentence"] == "Short." and memory["reading"]["scope"] == "system"
    assert list(Event(1.0, State.READY, PlannedRestart(DIAGNOSIS, 1)).to_dict())[3:] == ["diagnosis", "planned"]
    assert list(Event(1.0, State.READY, OffloadShort(DIAGNOSIS, DIAGNOSIS.message)).to_dict())[3:] == [
        "diagnosis", "sentence"]
    assert Event(1.0, State.READY, LogEvent(LogLine(1.0, "stderr", "hi"))).to_dict() == {
        "event": "log", "time": 1.0, "state": "ready", "stream": "stderr", "line": "hi"}


def test_each_event_has_its_one_sentence():
    assert Event(1.0, State.READY, StateChanged(State.READY, 0, url="http://h:1")).sentence().render("en") == (
        "The model is ready at http://h:1.")
    assert Event(1.0, State.RESTARTING, Restarting(3, 1.0)).sentence().render("en") == (
        "Restarting the server (attempt 3)…")
    assert Event(1.0, State.CRASHED, Crashed(5, -9, None, DIAGNOSIS)).sentence() is DIAGNOSIS.message
    assert Event(1.0, State.READY, LogEvent(LogLine(1.0, "stderr", "x"))).sentence() is None
