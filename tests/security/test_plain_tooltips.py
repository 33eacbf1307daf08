"""Tooltips stay text: a model's path, a damaged file's problem or an engine's log line that looks like HTML shows as
typed in its tooltip (Qt renders a tooltip that looks like HTML as rich text), for a widget, an item in a list and a
menu action, once the app's filter is installed (app/ui/shell/main.py installs it at start)."""

from __future__ import annotations

import ast

import pytest
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QHelpEvent, QTextDocument
from PySide6.QtGui import Qt as QtGui
from PySide6.QtWidgets import QApplication, QLabel, QMenu, QToolTip, QTreeWidget, QTreeWidgetItem

from app.ui.widgets import plain_tooltips
from tests.paths import ROOT

HOSTILE = '<b>x</b><img src="file:///etc/passwd"><a href="https://evil.example">fix</a>\nsecond line'


@pytest.fixture
def filtered(qapp):
    tooltips = plain_tooltips.install(qapp)
    yield tooltips
    qapp.removeEventFilter(tooltips)
    qapp._plain_tooltips = None
    QToolTip.hideText()


def _hover(widget, pos: QPoint) -> str:
    """Ask ``widget`` for its tooltip at ``pos`` as the mouse would; what the tooltip shows, as plain text."""
    QToolTip.hideText()
    QApplication.sendEvent(widget, QHelpEvent(QEvent.Type.ToolTip, pos, widget.mapToGlobal(pos)))
    assert QToolTip.isVisible(), "no tooltip was shown"
    document = QTextDocument()
    if QtGui.mightBeRichText(QToolTip.text()):  # what QToolTip's label does with the text
        document.setHtml(QToolTip.text())
    else:
        document.setPlainText(QToolTip.text())
    return document.toPlainText()


def test_a_widget_tooltip_shows_html_as_typed(qtbot, filtered):
    label = QLabel("model", textFormat=Qt.TextFormat.PlainText)
    qtbot.addWidget(label)
    label.setToolTip(HOSTILE)
    label.show()
    assert _hover(label, QPoint(2, 2)) == HOSTILE


def test_an_item_tooltip_shows_html_as_typed(qtbot, filtered):
    tree = QTreeWidget()
    qtbot.addWidget(tree)
    item = QTreeWidgetItem(["model"])
    item.setToolTip(0, HOSTILE)
    tree.addTopLevelItem(item)
    tree.show()
    qtbot.waitExposed(tree)
    assert _hover(tree.viewport(), tree.visualItemRect(item).center()) == HOSTILE


def test_a_menu_action_tooltip_shows_html_as_typed(qtbot, filtered):
    menu = QMenu()
    qtbot.addWidget(menu)
    menu.setToolTipsVisible(True)
    action = menu.addAction("recent model")
    action.setToolTip(HOSTILE)
    menu.popup(QPoint(0, 0))
    qtbot.waitExposed(menu)
    assert _hover(menu, menu.actionGeometry(action).center()) == HOSTILE


def test_without_the_filter_qt_would_render_it(qtbot):
    label = QLabel("model", textFormat=Qt.TextFormat.PlainText)
    qtbot.addWidget(label)
    label.setToolTip(HOSTILE)
    label.show()
    assert _hover(label, QPoint(2, 2)) != HOSTILE  # the image, the link and the bold drawn: the text is not shown
    QToolTip.hideText()


def test_the_app_installs_the_filter_at_start():
    tree = ast.parse((ROOT / "app/ui/shell/main.py").read_text(encoding="utf-8"))
    calls = {ast.unparse(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    assert "plain_tooltips.install" in calls
