"""How full the model's context is, and which earlier messages no longer reach the model."""

from __future__ import annotations

from dataclasses import dataclass, replace

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QVBoxLayout, QWidget

from app.core.chat.guard import dropped_notice
from app.core.text import current_language


@dataclass(frozen=True)
class ContextUse:
    """Measured after a reply: tokens the next request starts from, and the per-slot context."""

    used: int
    ctx: int | None
    budget: int | None = None
    dropped_messages: int = 0
    estimate: bool = False


class ContextMeter(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.use: ContextUse | None = None
        self.caption = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.bar = QProgressBar(self)
        self.bar.setTextVisible(False)
        self.bar.setMaximumHeight(10)
        self.summary = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.dropped = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.dropped.setStyleSheet("color: #b26a00;")
        row = QHBoxLayout()
        row.addWidget(self.caption)
        row.addWidget(self.bar, 1)
        row.addWidget(self.summary)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.dropped)
        self.retranslate()

    def set_use(self, use: ContextUse | None) -> None:
        self.use = use
        self.retranslate()

    def set_ctx(self, ctx: int | None) -> None:
        """The server (started again, perhaps with other settings) said its context: the same conversation is
        measured against it."""
        if self.use is not None and ctx and ctx != self.use.ctx:
            self.set_use(replace(self.use, ctx=ctx))

    def retranslate(self) -> None:
        self.caption.setText(self.tr("Context:"))
        use = self.use
        if use is None or not use.ctx:
            self.bar.setRange(0, 1)
            self.bar.setValue(0)
            self.summary.setText(self.tr("not measured yet") if use is None else
                                 self.tr("{used} tokens used (context size unknown)").format(used=use.used))
        else:
            self.bar.setRange(0, use.ctx)
            self.bar.setValue(min(use.used, use.ctx))
            text = self.tr("{used} of {ctx} tokens used").format(used=use.used, ctx=use.ctx)
            self.summary.setText(text + (" " + self.tr("(estimate)") if use.estimate else ""))
        dropped = use.dropped_messages if use else 0
        self.dropped.setText(dropped_notice(dropped).render(current_language()) if dropped else "")
        self.dropped.setVisible(bool(dropped))

    def percent(self) -> int:
        use = self.use
        return int(100 * use.used / use.ctx) if use and use.ctx else 0
