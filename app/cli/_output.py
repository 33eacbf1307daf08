"""Shared helpers for CLI commands: JSON output and rendering core values the same way the GUI does."""

from __future__ import annotations

import json
import sys
from typing import Any

from app.cli._hints import with_flag_hint
from app.core.problem import Check, Problem, Status, UserError
from app.core.text import T, Text
from app.core.text_safety import inert

_ICONS = {Status.OK: "ok  ", Status.WARNING: "warn", Status.ERROR: "FAIL"}


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2, default=str) + "\n")


def print_json_line(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def problem_lines(problem: Problem, *, lead: str | Text | None = "", step: str | Text | None = None,
                  evidence: int = 0) -> list[str]:
    """The one CLI rendering of a problem (check, user error, chat error, diagnosis): the sentence after ``lead``
    (None: the caller has printed it), then ``step`` and the next step, then the last ``evidence`` lines."""
    lines = [] if lead is None else [f"{lead}{problem.message}"]
    if step is not None and problem.next_step is not None and problem.next_step.render():
        lines.append(f"{step}{with_flag_hint(problem.next_step, problem.action)}")
    lines.extend(f"  | {inert(line)}" for line in (problem.evidence[-evidence:] if evidence else ()))
    return lines


def print_check(check: Check) -> None:
    step = "       -> " if check.status is not Status.OK else None
    for line in problem_lines(check, lead=f"[{_ICONS[check.status]}] ", step=step):
        print(line)


def report_user_error(error: UserError) -> int:
    """Print a user-facing failure on stderr and return the exit code for it (1)."""
    for line in problem_lines(error, lead=f"{T('error', '错误')}: ", step=f"{T('next step', '下一步')}: ", evidence=20):
        sys.stderr.write(line + "\n")
    return 1


def print_next_step(problem: Problem) -> None:
    """A diagnosis' next step under the sentence the caller printed ("  next step: ...")."""
    for line in problem_lines(problem, lead=None, step=T("  next step: ", "  下一步：")):
        print(line, flush=True)
