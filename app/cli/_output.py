"""Shared helpers for CLI commands: JSON output and rendering core values the same way the GUI does."""

from __future__ import annotations

import json
import sys
from typing import Any

from app.core.problem import Check, Status, UserError
from app.core.text import T

_ICONS = {Status.OK: "ok  ", Status.WARNING: "warn", Status.ERROR: "FAIL"}


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2, default=str) + "\n")


def print_json_line(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def print_check(check: Check) -> None:
    print(f"[{_ICONS[check.status]}] {check.message}")
    if check.fix and check.status is not Status.OK:
        print(f"       -> {check.fix}")


def report_user_error(error: UserError) -> int:
    """Print a user-facing failure on stderr and return the exit code for it (1)."""
    sys.stderr.write(f"{T('error', '错误')}: {error.message}\n")
    if error.fix:
        sys.stderr.write(f"{T('next step', '下一步')}: {error.fix}\n")
    for line in error.evidence[-20:]:
        sys.stderr.write(f"  | {line}\n")
    return 1
