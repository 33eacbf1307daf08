"""Shared helpers for CLI commands: JSON output and rendering core values the same way the GUI does."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from app.cli._hints import with_flag_hint
from app.core.problem import CHECK_JSON, Check, Problem, Status, UserError, problem_json
from app.core.text import T, Text
from app.core.text_safety import inert

_ICONS = {Status.OK: "ok  ", Status.WARNING: "warn", Status.ERROR: "FAIL"}


# Written as \uXXXX escapes in JSON: DEL, C1 controls, bidi overrides and marks (what text_safety.inert drops from
# terminal text), line/paragraph separators, and lone surrogates (a file name's undecodable bytes, os.fsdecode's
# surrogateescape), which would otherwise be invalid UTF-8. A parser gets the same string back; a terminal showing
# the JSON obeys none of them.
_UNSAFE_IN_JSON = re.compile("[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                             "\ud800-\udfff]")


def json_text(value: Any, *, indent: int | None = None) -> str:
    """``value`` as JSON for stdout: UTF-8-safe and inert in a terminal (C0 controls json escapes itself)."""
    text = json.dumps(value, ensure_ascii=False, indent=indent, default=str)
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def print_json(value: Any) -> None:
    sys.stdout.write(json_text(value, indent=2) + "\n")
    sys.stdout.flush()


def print_json_line(value: Any) -> None:
    sys.stdout.write(json_text(value) + "\n")
    sys.stdout.flush()


def json_error(problem: Problem) -> dict[str, Any]:
    """The one JSON object a ``--json`` command prints when it fails: ``{"error": {message, fix, evidence,
    fix_action}}``."""
    return {"error": problem_json(problem, None, CHECK_JSON)}


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


def report_user_error(error: UserError, json_mode: bool = False) -> int:
    """Print a user-facing failure on stderr and return the exit code for it (1); with ``json_mode`` stdout gets the
    same failure as one JSON object (:func:`json_error`), so a script never reads an empty stdout."""
    if json_mode:
        print_json(json_error(error))
    for line in problem_lines(error, lead=f"{T('error', '错误')}: ", step=f"{T('next step', '下一步')}: ", evidence=20):
        sys.stderr.write(line + "\n")
    return 1


def print_next_step(problem: Problem) -> None:
    """A diagnosis' next step under the sentence the caller printed ("  next step: ...")."""
    for line in problem_lines(problem, lead=None, step=T("  next step: ", "  下一步：")):
        print(line, flush=True)
