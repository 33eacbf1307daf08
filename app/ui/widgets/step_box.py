"""One numbered step of the window (1 Machine, 2 Model ...): a bold title over its panel."""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from app.ui.widgets import look


class StepBox(QFrame):
    def __init__(self, number: int, body: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        look.card(self)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.number = number
        self.title = QLabel(self)
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
