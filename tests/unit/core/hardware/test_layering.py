"""The hardware modules import one way: scan -> notes -> report, never back (function-level imports count too)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.paths import ROOT

HARDWARE = ROOT / "app" / "core" / "hardware"


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_notes_and_report_do_not_import_the_scan():
    for name in ("notes.py", "report.py", "cgroup.py", "system.py"):
        assert "app.core.hardware.scan" not in _imports(HARDWARE / name), name
    assert "app.core.hardware.notes" not in _imports(HARDWARE / "report.py")


def test_hardware_report_is_one_class_shared_by_scan_and_notes():
    from app.core.hardware import notes, report, scan

    assert scan.HardwareReport is report.HardwareReport is notes.HardwareReport
