"""The Diagnosis value: what the CLI, the GUI and chat errors show when the server stops or never starts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.problem import Fix, FixAction, JsonKeys, change_settings, problem_json
from app.core.text import T, Text, current_language

MAX_EVIDENCE_LINES = 20


@dataclass(frozen=True)
class Diagnosis:
    """Why the server stopped, in one plain sentence, with the next step as words and as data (a Problem).

    ``cause`` is a stable id (see ``CAUSES``); ``action`` is the fix a UI can apply: LaunchConfig changes
    (``Fix.CHANGE_SETTINGS``, applied with ``config.apply(ConfigChanges(action.changes))``; ``{"port": 0}`` means
    "pick a free port") or ``Fix.REBUILD_ENGINE`` (no setting: the app rebuilds that engine); ``restartable`` is
    False when restarting with the same settings cannot help (bad file, bad option, missing program or library).
    ``signal`` is a POSIX signal name such as "SIGKILL" (None on Windows and for plain exits).
    """

    cause: str
    message: Text
    next_step: Text
    action: FixAction | None = None
    evidence: tuple[str, ...] = ()
    exit_code: int | None = None
    signal: str | None = None
    exit_meaning: Text = field(default_factory=lambda: T("", ""))
    restartable: bool = True

    def render(self, lang: str | None = None) -> str:
        """Sentence and next step together, e.g. for a chat error bubble or a one-line CLI message."""
        hint = self.next_step.render(lang)
        separator = "" if (lang or current_language()) == "zh" else " "
        return f"{self.message.render(lang)}{separator}{hint}".strip()

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        return {
            "cause": self.cause,
            **problem_json(self, lang, DIAGNOSIS_JSON),
            "exit_code": self.exit_code,
            "signal": self.signal,
            "exit_meaning": self.exit_meaning.render(lang),
            "restartable": self.restartable,
        }


REBUILD_KEY = "rebuild_engine"  # the JSON "fix" key of a Fix.REBUILD_ENGINE action: {"rebuild_engine": "embedded"}


def fix_from_dict(fix: dict[str, Any]) -> FixAction | None:
    """A diagnosis fix as the builders write it (settings changes, or ``{"rebuild_engine": engine}``) as an action."""
    if REBUILD_KEY in fix:
        return FixAction(Fix.REBUILD_ENGINE, {"engine": fix[REBUILD_KEY]})
    return change_settings(fix)


def fix_to_dict(action: FixAction | None) -> dict[str, Any]:
    """The JSON "fix" of a diagnosis: the settings changes, ``{"rebuild_engine": engine}``, or {}."""
    if action is None:
        return {}
    if action.kind is Fix.REBUILD_ENGINE:
        return {REBUILD_KEY: action.get("engine")}
    return action.changes


DIAGNOSIS_JSON = JsonKeys(next_step="fix_hint", action="fix", action_json=fix_to_dict)


def trim_evidence(lines: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """At most MAX_EVIDENCE_LINES distinct lines, keeping their order."""
    seen: set[str] = set()
    kept: list[str] = []
    for line in lines:
        text = line.rstrip()
        if text and text not in seen:
            seen.add(text)
            kept.append(text)
    return tuple(kept[:MAX_EVIDENCE_LINES])
