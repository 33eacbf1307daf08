"""Find visible labels and buttons whose text does not fit (issue 11, "Screenshots as tests").

``clipped(window)`` walks the window's visible labels, buttons, check boxes, combo and spin boxes and returns
one line per widget whose text is cut: a single-line label whose widest line is wider than its contents rect, a
word-wrapped label shorter than its height for its width, a button narrower than its size hint (text + icon +
indicator + the style's padding), a combo box's chosen item or a spin box's value wider than its field, or any of
them sticking out sideways from the scroll area viewport (or window) that shows it. Being below the fold of a
scroll area is fine: the area scrolls vertically.

Widgets clipped by design are skipped when ``SKIP`` names their object name, with the reason.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QAbstractSpinBox,
    QCheckBox,
    QComboBox,
    QLabel,
    QPushButton,
    QStyle,
    QStyleOptionComboBox,
    QToolButton,
    QWidget,
)

SLACK = 1  # px: rounding between font metrics and layout

# objectName -> why its text may be cut on purpose
SKIP: dict[str, str] = {}


def _name(widget: QWidget) -> str:
    text = widget.currentText() if isinstance(widget, QComboBox) else widget.text() if hasattr(widget, "text") else ""
    return f"{type(widget).__name__}({widget.objectName() or '-'}) {text[:50]!r}"


def _text_overflow(widget: QWidget) -> str | None:
    if isinstance(widget, QLabel):
        text = widget.text()
        if not text.strip() or widget.pixmap() is not None and not widget.pixmap().isNull():
            return None
        if widget.wordWrap():
            need = widget.heightForWidth(widget.width())
            if need > widget.height() + SLACK:
                return f"wrapped text needs {need} px height, has {widget.height()}"
            return None
        if "<" in text and widget.textFormat() != Qt.TextFormat.PlainText:  # rich text (a link, bold)
            need = widget.sizeHint().width()  # the rich text document's width plus margins
            if need > widget.width() + SLACK:
                return f"needs {need} px width, has {widget.width()}"
            return None
        metrics = QFontMetrics(widget.font())
        need = max(metrics.horizontalAdvance(line) for line in text.splitlines())
        have = widget.contentsRect().width() - max(widget.indent(), 0)
        if need > have + SLACK:
            return f"text needs {need} px, has {have}"
        return None
    if isinstance(widget, QAbstractButton):
        if not widget.text().strip():
            return None
        need = widget.sizeHint().width()
        if need > widget.width() + SLACK:
            return f"button needs {need} px width, has {widget.width()}"
    return None


def _field_overflow(widget: QWidget) -> str | None:
    """A combo box's chosen item or a spin box's value wider than the field that shows it (Qt elides or cuts it).
    A line edit's long text is not checked: it scrolls, and the user can read it all."""
    if isinstance(widget, QComboBox):
        option = QStyleOptionComboBox()
        widget.initStyleOption(option)
        field = widget.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, option,
                                              QStyle.SubControl.SC_ComboBoxEditField, widget)
        icon = widget.iconSize().width() + 4 if not widget.itemIcon(widget.currentIndex()).isNull() else 0
        need, have = QFontMetrics(widget.font()).horizontalAdvance(widget.currentText()) + icon, field.width()
    elif isinstance(widget, QAbstractSpinBox):
        edit = widget.lineEdit()
        need, have = QFontMetrics(edit.font()).horizontalAdvance(edit.text()), edit.contentsRect().width()
    else:
        return None
    if need > have + SLACK:
        return f"shows {need} px of text in a {have} px field"
    return None


def _sideways_overflow(widget: QWidget, window: QWidget) -> str | None:
    """The widget runs past the right or left edge of the viewport (or window) that shows it."""
    parent = widget.parentWidget()
    while parent is not None and parent is not window:
        if isinstance(parent, QAbstractScrollArea) and parent.viewport().isAncestorOf(widget):
            view = parent.viewport()
            break
        parent = parent.parentWidget()
    else:
        view = window
    left = widget.mapTo(view, QPoint(0, 0)).x()
    right = left + widget.width()
    if left < -SLACK or right > view.width() + SLACK:
        return f"runs sideways out of its view ({left}..{right} of {view.width()} px)"
    return None


def clipped(window: QWidget) -> list[str]:
    found: list[str] = []
    for kind in (QLabel, QPushButton, QToolButton, QCheckBox, QComboBox, QAbstractSpinBox):
        for widget in window.findChildren(kind):
            if not widget.isVisibleTo(window) or widget.objectName() in SKIP:
                continue
            if widget.width() <= 0 or widget.height() <= 0:
                continue
            for problem in (_text_overflow(widget), _field_overflow(widget), _sideways_overflow(widget, window)):
                if problem:
                    found.append(f"{_name(widget)}: {problem}")
    return found


def seen_rect(widget: QWidget) -> QRect:
    """The part of ``widget`` (window coordinates) that its window, scroll areas and parents do not cut off."""
    window = widget.window()
    seen = QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())
    parent = widget.parentWidget()
    while parent is not None and parent is not window:
        seen = seen.intersected(QRect(parent.mapTo(window, QPoint(0, 0)), parent.size()))
        parent = parent.parentWidget()
    return seen.intersected(window.rect())


def hidden_part(widget: QWidget) -> str | None:
    """Why ``widget`` cannot be seen whole without scrolling or resizing (None when it can)."""
    if not widget.isVisible():
        return f"{_name(widget)} is not shown"
    full = QRect(widget.mapTo(widget.window(), QPoint(0, 0)), widget.size())
    seen = seen_rect(widget)
    if seen != full:
        return f"{_name(widget)} at y {full.top()}..{full.bottom() + 1}: only y {seen.top()}..{seen.bottom() + 1} seen"
    return None
