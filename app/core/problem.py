"""Typed results shown to the user: a check outcome with a plain sentence and a next step."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from app.core.text import Text


class Status(str, Enum):
    OK = "ok"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True)
class Check:
    """One check's outcome.

    ``id`` is stable (``magic``, ``truncation``, ``path_ascii`` ...) so UIs and tests can find it.
    ``fix_action`` is data a UI can apply (e.g. ``{"action": "copy_to_safe_path"}``); ``fix`` says it in words.
    """

    id: str
    status: Status
    message: Text
    fix: Text | None = None
    evidence: tuple[str, ...] = ()
    fix_action: dict[str, Any] | None = None

    @property
    def is_error(self) -> bool:
        return self.status is Status.ERROR

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status.value,
            "message": self.message.render(lang),
            "fix": self.fix.render(lang) if self.fix else None,
            "evidence": list(self.evidence),
            "fix_action": self.fix_action,
        }


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
    fix: Text | None = None
    evidence: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return self.message.render()
