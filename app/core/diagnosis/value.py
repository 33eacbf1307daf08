"""The Diagnosis value: what the CLI, the GUI and chat errors show when the server stops or never starts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.text import T, Text, current_language

MAX_EVIDENCE_LINES = 20


@dataclass(frozen=True)
class Diagnosis:
    """Why the server stopped, in one plain sentence, with the next step as words and as data.

    ``cause`` is a stable id (see ``CAUSES``); ``fix`` holds LaunchConfig changes a UI can apply with
    ``config.with_changes(**fix)`` (``{"port": 0}`` means "pick a free port"); ``restartable`` is False when
    restarting with the same settings cannot help (bad file, bad option, missing program or library).
    ``signal`` is a POSIX signal name such as "SIGKILL" (None on Windows and for plain exits).
    """

    cause: str
    message: Text
    fix_hint: Text
    fix: dict[str, Any] = field(default_factory=dict)
    evidence: tuple[str, ...] = ()
    exit_code: int | None = None
    signal: str | None = None
    exit_meaning: Text = field(default_factory=lambda: T("", ""))
    restartable: bool = True

    def render(self, lang: str | None = None) -> str:
        """Sentence and next step together, e.g. for a chat error bubble or a one-line CLI message."""
        hint = self.fix_hint.render(lang)
        separator = "" if (lang or current_language()) == "zh" else " "
        return f"{self.message.render(lang)}{separator}{hint}".strip()

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        return {
            "cause": self.cause,
            "message": self.message.render(lang),
            "fix_hint": self.fix_hint.render(lang),
            "fix": dict(self.fix),
            "evidence": list(self.evidence),
            "exit_code": self.exit_code,
            "signal": self.signal,
            "exit_meaning": self.exit_meaning.render(lang),
            "restartable": self.restartable,
        }


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
