"""Chinese layout details: "训练上下文" never breaks across lines, Flash attention is translated, and the Recent
button's arrow is part of its text (it cannot overlap it)."""

from __future__ import annotations

import json

from PySide6.QtGui import QTextDocument

from app.ui.steps.model import model_actions as actions
from app.ui.steps.model.model_panel import ModelPanel
from tests.paths import ROOT
from tests.ui.conftest import LONG, open_and_wait


def _lines(html: str, width: int) -> list[str]:
    doc = QTextDocument()
    doc.setHtml(html)
    doc.setTextWidth(width)
    doc.documentLayout().documentSize()  # lays the text out
    lines, block = [], doc.begin()
    while block.isValid():
        layout = block.layout()
        for i in range(layout.lineCount()):
            line = layout.lineAt(i)
            lines.append(block.text()[line.textStart():line.textStart() + line.textLength()])
        block = block.next()
    return lines


def test_the_model_summary_never_breaks_inside_a_part(qtbot, window, tiny_model, monkeypatch):
    open_and_wait(qtbot, window, tiny_model)
    qtbot.waitUntil(lambda: window.model.report is not None and window.model.report.info is not None, timeout=LONG)
    monkeypatch.setattr(actions, "tr", lambda text: {"trained context {n}": "训练上下文 {n}"}.get(text, text))
    text = actions.summary_text(window.model.path, window.model.report)
    word = actions.unbroken("训练上下文")
    assert word in text and word.replace("\u2060", "") == "训练上下文"
    part = actions.unbroken(f"训练上下文 {window.model.report.info.context_length}")
    fitting = window.model.summary.fontMetrics().horizontalAdvance(part) + 16  # the document margin
    for width in range(fitting, fitting + 400, 7):  # wherever the label's width makes it wrap
        assert any(part in line for line in _lines(text.replace("\n", "<br>"), width)), width


def test_flash_attention_has_a_chinese_name():
    glossary = json.loads((ROOT / "resources" / "translations" / "zh_CN.json").read_text(encoding="utf-8"))
    assert any("\u4e00" <= ch <= "\u9fff" for ch in glossary["Flash attention"])


def test_the_recent_buttons_arrow_is_in_its_text(qtbot):
    panel = ModelPanel()
    qtbot.addWidget(panel)
    button = panel.recent_button
    assert button.text().endswith("▾") and "menu-indicator" in button.styleSheet()
    assert button.sizeHint().width() >= button.fontMetrics().horizontalAdvance(button.text())
