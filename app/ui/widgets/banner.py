"""A dismissible notice across the top of the window (e.g. "your settings file was damaged")."""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from app.ui.widgets import look


class Banner(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        look.card(self, look.BANNER)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.close_button = QToolButton(self)
        self.close_button.setText("✕")
        self.close_button.setAutoRaise(True)
        self.close_button.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.close_button)
        self.hide()

    def show_text(self, text: str) -> None:
        self.label.setText(text)
        self.show()
