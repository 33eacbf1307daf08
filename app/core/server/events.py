"""Supervisor states and the events every consumer (CLI, GUI, tests) receives."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any

from app.core.text import T, Text


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


@dataclass(frozen=True)
class Event:
    kind: str  # "state" | "crash" | "restart" | "log" | "memory" | "planned_restart"
    time: float
    state: State
    data: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def now(cls, kind: str, state: State, **data: Any) -> Event:
        return cls(kind, time.time(), state, data)

    def sentence(self) -> Text | None:
        """The one sentence a person sees for this event (None for log lines)."""
        if self.kind == "state":
            return state_sentence(self.state, url=self.data.get("url", ""), attempt=self.data.get("attempt", ""))
        if self.kind == "crash":
            diagnosis = self.data.get("diagnosis")
            return diagnosis.message if diagnosis is not None else state_sentence(State.CRASHED)
        if self.kind == "restart":
            return state_sentence(State.RESTARTING, attempt=self.data.get("attempt", ""))
        if self.kind == "planned_restart":
            return self.data["diagnosis"].message
        sentence = self.data.get("sentence")  # "memory": the watchdog's level, said in one sentence
        return sentence if isinstance(sentence, Text) else None

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        """JSON-safe: ``{"event": "state", "state": "ready", "time": ..., "pid": ..., "url": ...}``."""
        out: dict[str, Any] = {"event": self.kind, "time": round(self.time, 3), "state": self.state.value}
        for key, value in self.data.items():
            out[key] = _jsonable(value, lang)
        return out


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
