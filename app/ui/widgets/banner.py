"""A dismissible notice across the top of the window (e.g. "your settings file was damaged")."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from app.ui.widgets import look
from app.ui.widgets.step_box import ColumnScroll

MAX_LINES = 4  # a longer notice scrolls


class Banner(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        look.card(self, look.BANNER)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.label = QLabel(textFormat=Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.label.setStyleSheet("background: transparent;")
        self.scroller = ColumnScroll(self.label, self)  # a long notice scrolls in a few lines, the window stays
        self.scroller.setStyleSheet("background: transparent;")
        self.close_button = QToolButton(self)
        self.close_button.setText("✕")
        self.close_button.setAutoRaise(True)
        self.close_button.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        layout.addWidget(self.scroller, 1)
        layout.addWidget(self.close_button)
        self.hide()

    def show_text(self, text: str) -> None:
        self.label.setText(text)
        self.show()

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        return QSize(hint.width(), min(hint.height(), self.fontMetrics().lineSpacing() * MAX_LINES + 16))

    def minimumSizeHint(self) -> QSize:
        return QSize(0, self.fontMetrics().lineSpacing() + 16)
