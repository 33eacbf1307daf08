"""The mouse wheel changes a combo box, spin box or slider only once the user has clicked or tabbed into it.

Scrolling a column full of settings would otherwise change whichever field happens to pass under the pointer
(the KV-cache type, the context size). ``guard_wheel(*widgets)`` gives each widget StrongFocus (the wheel no
longer focuses it) and an event filter: while the widget is not focused, a wheel event over it scrolls the
nearest scroll area around it instead, or goes on to the parent when there is none.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractScrollArea, QWidget


class WheelGuard(QObject):
    """Event filter for one widget (its parent); see the module docstring."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self._widget = widget
        widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.Wheel or watched is not self._widget or self._widget.hasFocus():
            return False
        area = scroll_area_around(self._widget)
        if area is not None:
            QCoreApplication.sendEvent(area.viewport(), event)  # the area's scroll bar takes it
        else:
            event.ignore()  # a real wheel event then goes on to the parent widgets
        return True


def scroll_area_around(widget: QWidget) -> QAbstractScrollArea | None:
    """The nearest scroll area that holds ``widget`` in its viewport, or None."""
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QAbstractScrollArea):
            return parent
        parent = parent.parentWidget()
    return None


def guard_wheel(*widgets: QWidget) -> None:
    """Keep the wheel from changing any of ``widgets`` until it has focus. Calling it twice is harmless."""
    for widget in widgets:
        if not is_guarded(widget):
            WheelGuard(widget)


def is_guarded(widget: QWidget) -> bool:
    return widget.findChild(WheelGuard, options=Qt.FindChildOption.FindDirectChildrenOnly) is not None
