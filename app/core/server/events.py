"""Supervisor states and the events every consumer (CLI, GUI, tests) receives.

An :class:`Event` is its time, the supervisor's state then, and one typed payload; the payload's class says what
happened (:class:`EventKind`, whose value is the ``"event"`` key of ``serve --json``):

- ``state`` :class:`StateChanged`: every state transition (the fields that state fills in).
- ``crash`` :class:`Crashed`: the server exited on its own, or never became ready; with its diagnosis.
- ``restart`` :class:`Restarting`: an automatic restart waits out its back-off.
- ``planned_restart`` :class:`PlannedRestart`: the memory watchdog restarts a Ready server on purpose.
- ``offload`` :class:`OffloadShort`: the load put fewer layers on the GPU than asked (the server runs on).
- ``memory`` :class:`MemoryLevel`: the memory watchdog's level changed.
- ``vram`` :class:`VramTaken`: another program took GPU memory while the server runs.
- ``log`` :class:`LogEvent`: one line of the server's output, the ``LogLine`` the server log kept.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import TYPE_CHECKING, Any, ClassVar

from app.core.text import T, Text

if TYPE_CHECKING:  # the types only: no import cycle with the watchdog, no logging.handlers at start-up
    from app.core.diagnosis import Diagnosis
    from app.core.process.child_log import LogLine
    from app.core.server.memory_values import Level, MemoryReading, VramGrab


class State(StrEnum):
    STOPPED = "stopped"
    STARTING = "starting"  # process spawned, nothing heard yet
    LOADING = "loading"  # it talks (log lines or HTTP 503) but does not answer yet
    READY = "ready"
    STOPPING = "stopping"
    CRASHED = "crashed"  # exited unexpectedly; a restart or "failed" follows at once
    RESTARTING = "restarting"  # waiting out the back-off before the next start
    FAILED = "failed"  # gave up: not restartable, crash loop, or never became ready


ACTIVE_STATES = frozenset({State.STARTING, State.LOADING, State.READY, State.RESTARTING, State.CRASHED})
IDLE_STATES = frozenset({State.STOPPED, State.FAILED})  # no server and none on the way: Start may begin one

STATE_SENTENCES = {
    State.STOPPED: T("The server is stopped.", "服务器已停止。"),
    State.STARTING: T("Starting the server…", "正在启动服务器…"),
    State.LOADING: T("Loading the model…", "正在加载模型…"),
    State.READY: T("The model is ready at {url}.", "模型已就绪：{url}"),
    State.STOPPING: T("Stopping the server…", "正在停止服务器…"),
    State.CRASHED: T("The server stopped unexpectedly.", "服务器意外停止。"),
    State.RESTARTING: T("Restarting the server (attempt {attempt})…", "正在重启服务器（第 {attempt} 次）…"),
    State.FAILED: T("The server could not be kept running.", "服务器无法保持运行。"),
}


def state_sentence(state: State, **params: Any) -> Text:
    template = STATE_SENTENCES[state]
    return Text(template.en, template.zh, params)


class EventKind(StrEnum):
    """What an event says; the value is the ``"event"`` key of the JSON ``serve --json`` prints."""

    STATE = "state"
    CRASH = "crash"
    RESTART = "restart"
    PLANNED_RESTART = "planned_restart"
    OFFLOAD = "offload"
    MEMORY = "memory"
    VRAM = "vram"
    LOG = "log"


# the JSON keys of a state event, in the order serve --json always printed them (restart_count follows); a key in
# _WHEN_SET is printed only when it has a value (a failure before any process ran has no pid)
_STATE_KEYS: dict[State, tuple[str, ...]] = {
    State.STARTING: ("command_line", "notes", "backend"),
    State.LOADING: ("pid",),
    State.READY: ("pid", "url", "load_seconds"),
    State.STOPPING: ("pid",),
    State.STOPPED: ("exit_code",),
    State.CRASHED: ("pid", "exit_code", "diagnosis"),
    State.RESTARTING: ("attempt", "delay_s"),
    State.FAILED: ("diagnosis", "pid", "reason"),
}
_WHEN_SET = frozenset({"pid", "reason"})


@dataclass(frozen=True)
class StateChanged:
    """The supervisor moved to ``state``; the fields that state fills in (see ``_STATE_KEYS``), the rest None."""

    KIND: ClassVar[EventKind] = EventKind.STATE
    state: State
    restart_count: int
    pid: int | None = None
    url: str | None = None
    load_seconds: float | None = None
    command_line: str | None = None
    notes: tuple[Text, ...] = ()
    backend: dict[str, Any] | None = None  # BackendInfo.to_dict() of the engine being started
    diagnosis: Diagnosis | None = None
    reason: str | None = None  # FAILED after a crash: policy.CRASH_LOOP or policy.NOT_RESTARTABLE
    exit_code: int | None = None
    attempt: int | None = None
    delay_s: float | None = None

    def sentence(self) -> Text:
        return state_sentence(self.state, url=self.url or "", attempt=self.attempt or "")

    def json_fields(self, lang: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in _STATE_KEYS[self.state]:
            value = getattr(self, key)
            if value is not None or key not in _WHEN_SET:
                out[key] = _jsonable(value, lang)
        out["restart_count"] = self.restart_count
        return out


@dataclass(frozen=True)
class Crashed:
    """The server exited unexpectedly (state CRASHED) or was stopped for never becoming ready (FAILED)."""

    KIND: ClassVar[EventKind] = EventKind.CRASH
    pid: int | None
    exit_code: int | None
    signal: str | None
    diagnosis: Diagnosis

    def sentence(self) -> Text:
        return self.diagnosis.message


@dataclass(frozen=True)
class Restarting:
    KIND: ClassVar[EventKind] = EventKind.RESTART
    attempt: int
    delay_s: float

    def sentence(self) -> Text:
        return state_sentence(State.RESTARTING, attempt=self.attempt)


@dataclass(frozen=True)
class PlannedRestart:
    """The memory watchdog restarts the Ready server on purpose; ``planned``: how many times so far."""

    KIND: ClassVar[EventKind] = EventKind.PLANNED_RESTART
    diagnosis: Diagnosis
    planned: int

    def sentence(self) -> Text:
        return self.diagnosis.message


@dataclass(frozen=True)
class OffloadShort:
    """Fewer layers went to the GPU than the config asks (said once per load; the server runs on)."""

    KIND: ClassVar[EventKind] = EventKind.OFFLOAD
    diagnosis: Diagnosis
    sentence_text: Text

    def sentence(self) -> Text:
        return self.sentence_text


@dataclass(frozen=True)
class MemoryLevel:
    """The memory watchdog's level changed (``sentence_text`` says it)."""

    KIND: ClassVar[EventKind] = EventKind.MEMORY
    level: Level
    reading: MemoryReading
    sentence_text: Text

    def sentence(self) -> Text:
        return self.sentence_text


@dataclass(frozen=True)
class VramTaken:
    """Another program took GPU memory while the server runs."""

    KIND: ClassVar[EventKind] = EventKind.VRAM
    grab: VramGrab
    sentence_text: Text

    def sentence(self) -> Text:
        return self.sentence_text


@dataclass(frozen=True)
class LogEvent:
    """One line of the server's output: the ``LogLine`` its log kept, handed on as it is."""

    KIND: ClassVar[EventKind] = EventKind.LOG
    line: LogLine

    def sentence(self) -> None:
        return None

    def json_fields(self, lang: str | None) -> dict[str, Any]:
        return {"stream": self.line.stream, "line": self.line.text}


Payload = StateChanged | Crashed | Restarting | PlannedRestart | OffloadShort | MemoryLevel | VramTaken | LogEvent

# a payload's own sentence is ``sentence_text``; in the JSON it keeps the key it always had
_JSON_NAMES = {"sentence_text": "sentence"}


@dataclass(frozen=True)
class Event:
    """What the supervisor tells its subscribers: when, in which state, and the typed ``payload``."""

    time: float
    state: State
    payload: Payload

    @classmethod
    def now(cls, state: State, payload: Payload) -> Event:
        return cls(time.time(), state, payload)

    @property
    def kind(self) -> EventKind:
        return self.payload.KIND

    def sentence(self) -> Text | None:
        """The one sentence a person sees for this event (None for log lines)."""
        return self.payload.sentence()

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        """JSON-safe: ``{"event": "state", "time": ..., "state": "ready", "pid": ..., "url": ...}``."""
        out: dict[str, Any] = {"event": self.kind.value, "time": round(self.time, 3), "state": self.state.value}
        out.update(_payload_json(self.payload, lang))
        return out


def _payload_json(payload: Payload, lang: str | None) -> dict[str, Any]:
    if isinstance(payload, (StateChanged, LogEvent)):
        return payload.json_fields(lang)
    return {_JSON_NAMES.get(f.name, f.name): _jsonable(getattr(payload, f.name), lang)
            for f in dataclasses.fields(payload)}


def _jsonable(value: Any, lang: str | None) -> Any:
    if isinstance(value, Text):
        return value.render(lang)
    if hasattr(value, "to_dict"):
        try:
            return value.to_dict(lang)
        except TypeError:
            return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [_jsonable(item, lang) for item in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v, lang) for k, v in value.items()}
    if isinstance(value, Enum):
        return value.value
    return value
