"""Every sentence the window shows right now, as rendered (issue 11: "a test scans every rendered sentence of the
main flows, in both languages, for flags, class names and exception names").

``shown_sentences(window)`` reads what a user can see or hover: label and button texts, tool tips, group and tab
titles, combo box items, list rows, placeholders, the window title, the status bar, the menus, and the chat
transcript without the messages themselves (what the user and the model wrote is theirs). Raw text the window quotes
on purpose is not a sentence and is left out: the log pane, a problem's evidence lines (a read-only text box), the
command line to copy and the server's address (the widgets a test passes as ``quotes``).
"""

from __future__ import annotations

import re

from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QMainWindow,
    QMenu,
    QPlainTextEdit,
    QTabWidget,
    QWidget,
)

from tests.unit.test_no_flags_in_sentences import Sentence

_TAG = re.compile(r"<[^>]+>")


def _plain(text: str) -> str:
    return _TAG.sub(" ", text).replace("&nbsp;", " ").replace("&amp;", "&").strip()


def _where(widget: QWidget) -> str:
    return f"{type(widget).__name__}({widget.objectName() or '-'})"


def _texts_of(widget: QWidget) -> list[str]:
    texts = [widget.toolTip()]
    if isinstance(widget, (QLabel, QAbstractButton)):
        texts.append(widget.text())
    if isinstance(widget, QGroupBox):
        texts.append(widget.title())
    if isinstance(widget, QComboBox):
        texts += [widget.itemText(i) for i in range(widget.count())]
    if isinstance(widget, QListWidget):
        texts += [widget.item(i).text() for i in range(widget.count())]
    if isinstance(widget, (QLineEdit, QPlainTextEdit)):
        texts.append(widget.placeholderText())
    if isinstance(widget, QTabWidget):
        texts += [widget.tabText(i) for i in range(widget.count())]
    return texts


def _transcript_sentences(window) -> list[str]:
    pane = window.chat_tab.pane if hasattr(window, "chat_tab") else None  # the main window's Chat tab, once loaded
    if pane is None:
        return []
    transcript = pane.transcript
    text = transcript.plain_text()
    for entry in transcript.entries:
        if entry.content:
            text = text.replace(entry.content, "\n")
    return [line for line in text.splitlines() if line.strip()]


def shown_sentences(window: QMainWindow, quotes: tuple[QWidget, ...] = ()) -> list[Sentence]:
    """Sentences of the visible widgets (and the menus), minus those inside ``quotes`` and the log pane."""
    skipped = (*quotes, getattr(window, "logs", None))
    found: list[Sentence] = [Sentence("window title", window.windowTitle()),
                             Sentence("status bar", window.statusBar().currentMessage())]
    for widget in window.findChildren(QWidget):
        if not widget.isVisibleTo(window) or any(q is not None and (q is widget or q.isAncestorOf(widget))
                                                 for q in skipped):
            continue
        found += [Sentence(_where(widget), _plain(text)) for text in _texts_of(widget) if text and text.strip()]
    for menu in window.findChildren(QMenu):
        found += [Sentence(f"menu {menu.title()}", action.text()) for action in menu.actions() if action.text()]
    found += [Sentence("chat transcript", line) for line in _transcript_sentences(window)]
    return [sentence for sentence in found if sentence.text]
