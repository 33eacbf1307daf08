"""The one problem shape every face renders: a sentence, a next step, evidence lines and an optional fix button.

Checks, user errors, chat errors and crash diagnoses all carry these four fields under the same names
(``message``, ``next_step``, ``evidence``, ``action``), so the CLI has one renderer (``app.cli._output``) and the
window one (``app.ui.widgets.problem_view``). ``action`` says what a fix button does, as data: a :class:`Fix` kind
and its parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from app.core.text import T, Text


class Status(StrEnum):
    OK = "ok"
    WARNING = "warning"
    ERROR = "error"


class Fix(StrEnum):
    """What a fix button does. The value is the ``"action"`` key of the JSON the CLI prints."""

    CHANGE_SETTINGS = "change_settings"  # params: LaunchConfig changes ({"port": 0} means "any free port")
    REBUILD_ENGINE = "rebuild_engine"  # params: engine
    SWITCH_ENGINE = "switch_engine"  # params: engine (the one to switch to)
    TEST_ENGINE = "test_engine"  # params: engine
    COPY_TO_SAFE_PATH = "copy_to_safe_path"  # params: path, suggested_dir
    USE_FIRST_SHARD = "use_first_shard"  # params: path
    DOWNLOAD_MISSING_SHARDS = "download_missing_shards"  # params: missing
    REDOWNLOAD = "redownload"  # params: missing_bytes (optional)
    UPDATE_BACKEND = "update_backend"  # params: min_build
    LARGER_CONTEXT = "larger_context"  # params: needed_tokens
    WAIT_LONGER = "wait_longer"  # params: read_timeout_s
    CHOOSE_SERVER_BIN = "choose_server_bin"  # no params: choose the llama-server program or use the built-in engine
    GET_GPU_ENGINE = "get_gpu_engine"  # params: build (a release build kind, "cuda-13" ...; absent: the fitting one)


@dataclass(frozen=True)
class FixAction:
    """A fix a UI can apply: its ``kind`` and the data it needs (``params``)."""

    kind: Fix
    params: Mapping[str, Any] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.params.get(key, default)

    @property
    def changes(self) -> dict[str, Any]:
        """The LaunchConfig changes of a CHANGE_SETTINGS fix; {} for every other kind."""
        return dict(self.params) if self.kind is Fix.CHANGE_SETTINGS else {}

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: ``{"action": kind, **params}``."""
        return {"action": self.kind.value, **self.params}


def change_settings(changes: Mapping[str, Any]) -> FixAction | None:
    """A fix that changes launch settings; None when there is nothing to change."""
    return FixAction(Fix.CHANGE_SETTINGS, dict(changes)) if changes else None


def fix_action(kind: Fix, **params: Any) -> FixAction:
    return FixAction(kind, params)


@runtime_checkable
class Problem(Protocol):
    """What every problem shows: the sentence, the next step, the evidence lines and the fix button's action."""

    @property
    def message(self) -> Text: ...

    @property
    def next_step(self) -> Text | None: ...

    @property
    def evidence(self) -> tuple[str, ...]: ...

    @property
    def action(self) -> FixAction | None: ...


@dataclass(frozen=True)
class JsonKeys:
    """The names a kind's ``--json`` output gives the shared fields. That output is an external interface older
    than the one shape, so each kind keeps its own names (and its fix's own shape)."""

    next_step: str
    action: str | None
    action_json: Callable[[FixAction | None], Any] = lambda action: action.to_dict() if action else None


CHECK_JSON = JsonKeys(next_step="fix", action="fix_action")  # Check, and an engine report row
USER_ERROR_JSON = JsonKeys(next_step="fix", action=None)  # a demo fetch's problem


def problem_json(problem: Problem, lang: str | None, keys: JsonKeys) -> dict[str, Any]:
    """The one mapping from the shape's names to the JSON ones: message, next step, evidence, action."""
    data: dict[str, Any] = {
        "message": problem.message.render(lang),
        keys.next_step: problem.next_step.render(lang) if problem.next_step is not None else None,
        "evidence": list(problem.evidence),
    }
    if keys.action is not None:
        data[keys.action] = keys.action_json(problem.action)
    return data


@dataclass(frozen=True)
class Check:
    """One check's outcome.

    ``id`` is stable (``magic``, ``truncation``, ``path_ascii`` ...) so UIs and tests can find it.
    ``action`` is the fix a UI can apply (e.g. ``Fix.COPY_TO_SAFE_PATH``); ``next_step`` says it in words.
    """

    id: str
    status: Status
    message: Text
    next_step: Text | None = None
    evidence: tuple[str, ...] = ()
    action: FixAction | None = None

    @property
    def is_error(self) -> bool:
        return self.status is Status.ERROR

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        return {"id": self.id, "status": self.status.value, **problem_json(self, lang, CHECK_JSON)}


def worst_status(checks: list[Check]) -> Status:
    statuses = {c.status for c in checks}
    for status in (Status.ERROR, Status.WARNING):
        if status in statuses:
            return status
    return Status.OK


@dataclass
class UserError(Exception):
    """A failure that reaches the user as a sentence and a next step, never a traceback."""

    message: Text
    next_step: Text | None = None
    evidence: tuple[str, ...] = ()
    action: FixAction | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        self.evidence = tuple(self.evidence)

    def __str__(self) -> str:
        return self.message.render()


def error_detail(error: BaseException) -> str:
    """What an unexpected error says, to put inside a sentence; never the exception's class name."""
    return str(error) or T("no details were given", "没有给出详细信息").render()
