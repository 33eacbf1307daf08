"""One numbered step of the window (1 Machine, 2 Model ...): a bold title over its panel; and the column that
holds steps: it scrolls up and down, never sideways, and never asks the window to grow."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from app.ui.widgets import look


class StepBox(QFrame):
    def __init__(self, number: int, body: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        look.card(self)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.number = number
        self.title = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        look.bold(self.title, 1.5)
        self.body = body
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 10)
        layout.setSpacing(6)
        layout.addWidget(self.title)
        layout.addWidget(body)

    def set_title(self, title: str, hint: str = "") -> None:
        self.title.setText(f"{self.number}  {title}")
        self.title.setToolTip(hint)
        self.setAccessibleName(title)


class ColumnScroll(QScrollArea):
    """A scrolling column: as wide as its content needs at least (so it never scrolls sideways: a splitter keeps
    it that wide), as tall as the room it gets (long content scrolls). ``max_share`` caps the height it asks for,
    as a share of its parent's height, so a tall card above the chat leaves the chat its room."""

    def __init__(self, widget: QWidget, parent: QWidget | None = None, *, max_share: float | None = None) -> None:
        super().__init__(parent)
        self.max_share = max_share
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWidget(widget)
        widget.installEventFilter(self)  # the content changed (a card appeared): ask again for room

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()
            QTimer.singleShot(0, self, self.updateGeometry)  # again once the content's layout has settled
        return super().eventFilter(watched, event)

    def _bar_width(self) -> int:
        return self.verticalScrollBar().sizeHint().width()

    def _viewport_width(self) -> int:
        """The viewport's width, worked out from the area and its bar: the first ``viewport()`` hands Python an
        object of a Qt-private class, and PySide then creates every QtWidgets class and enum it had left for later
        (40 enums, about 12 ms) while the window is built, before its first paint. The window laid out this way
        paints pixel for pixel as it did with ``viewport().width()`` (compared at the first paint and 3 s later)."""
        bar = self.verticalScrollBar()
        return self.maximumViewportSize().width() - (bar.width() if bar.isVisibleTo(self) else 0)

    def minimumSizeHint(self) -> QSize:
        """As wide as the content's minimum; with ``max_share``, as tall as its capped height (the content gets
        that room before the widgets beside it grow), else a few lines."""
        content = self.widget()
        inner = content.minimumSizeHint() if content is not None else QSize(0, 0)
        height = self.sizeHint().height() if self.max_share is not None else 60
        return QSize(inner.width() + self._bar_width(), height)

    def sizeHint(self) -> QSize:
        widget = self.widget()
        if widget is None:
            return super().sizeHint()
        inner_min = widget.minimumSizeHint().width() + self._bar_width()
        width = max(self.width(), inner_min)
        inner_width = max(self._viewport_width(), inner_min - self._bar_width())
        inner = widget.heightForWidth(inner_width) if widget.hasHeightForWidth() else -1
        height = inner if inner > 0 else widget.sizeHint().height()
        parent = self.parentWidget()
        if self.max_share is not None and parent is not None and parent.height() > 0:
            height = min(height, int(parent.height() * self.max_share))
        return QSize(width, height)
