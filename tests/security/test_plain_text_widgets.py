"""Untrusted text in the window stays text: a model name, a file name or a server answer that looks like HTML is shown
as typed, never rendered as rich text (no hidden words, no fake links, no images)."""

from __future__ import annotations

import ast
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from app.core.problem import Check, Status
from app.core.text import T
from app.ui.widgets.check_list import CheckList
from app.ui.widgets.problem_view import ProblemView

HOSTILE = '<img src="x"><a href="https://evil.example">Click to fix</a><span style="font-size:1px">hidden</span>'
RICH_ON_PURPOSE = {("app/ui/steps/server/server_panel.py", "url_value")}  # the address as a link, escaped


def test_a_hostile_problem_is_shown_as_typed(qtbot):
    view = ProblemView()
    qtbot.addWidget(view)
    view.set_problem(Check("names", Status.ERROR, T("{name} failed", "{name} 失败", name=HOSTILE)))
    shown = f"{HOSTILE} failed"
    assert view.message.text() == shown
    rich = QLabel(shown, wordWrap=True)  # what the same label showed before: rich text, the link and image drawn
    qtbot.addWidget(rich)
    area = view.message.sizeHint().width() * view.message.sizeHint().height()
    assert view.message.textFormat() == Qt.TextFormat.PlainText
    assert area > rich.sizeHint().width() * rich.sizeHint().height()  # every character drawn, none hidden


def test_a_hostile_check_row_is_shown_as_typed(qtbot):
    checks = CheckList()
    qtbot.addWidget(checks)
    checks.set_checks([Check("names", Status.WARNING, T("{name}", "{name}", name=HOSTILE))])
    rows = [label for label in checks.findChildren(QLabel) if HOSTILE in label.text()]
    assert rows and all(label.textFormat() == Qt.TextFormat.PlainText for label in rows)


def test_every_label_in_the_window_is_plain_text():
    root = Path(__file__).resolve().parents[2]
    rich = []
    for path in sorted((root / "app/ui").rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "QLabel":
                line = source.splitlines()[node.lineno - 1]
                allowed = any(str(path).endswith(file) and name in line for file, name in RICH_ON_PURPOSE)
                if not allowed and "textFormat" not in {keyword.arg for keyword in node.keywords}:
                    rich.append(f"{path.relative_to(root)}:{node.lineno}")
    assert rich == [], "QLabel without textFormat=Qt.TextFormat.PlainText (it would render HTML): " + ", ".join(rich)
