"""The SHA-256 row of the Model step: expected hash field, "Check file hash", progress with Cancel, verdict.

Hashing runs ``validate(..., compute_sha256=True)`` in a worker (the core caches digests, so a second
check of the same file is instant); the verdict is the core's own sha256 check sentence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QGridLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QWidget,
)

from app.ui.i18n import Retranslating
from app.ui.steps.model import model_actions as actions
from app.ui.workers import Task, run_task

if TYPE_CHECKING:
    from app.core.session import CheckedModel


class HashRow(Retranslating, QWidget):
    """Signals: ``hashed(CheckedModel)`` with the model's checks plus the sha256 row;
    ``expectedHashChanged(str)`` when the user edits the expected value."""

    hashed = Signal(object)
    expectedHashChanged = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path: str | None = None
        self.task: Task | None = None
        # ("done" | "cancelled" | "failed", the checks | None | the error)
        self.outcome: tuple[str, CheckedModel | BaseException | None] | None = None
        self.label = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.expected = QLineEdit(self)
        self.expected.setClearButtonEnabled(True)
        self.expected.editingFinished.connect(lambda: self.expectedHashChanged.emit(self.expected.text().strip()))
        self.button = QPushButton(self)
        self.button.clicked.connect(self.start)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(10)
        self.cancel_button = QPushButton(self)
        self.cancel_button.clicked.connect(self.cancel)
        self.verdict = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.verdict.setWordWrap(True)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.label, 0, 0)
        grid.addWidget(self.expected, 0, 1)
        grid.addWidget(self.button, 0, 2)
        grid.addWidget(self.progress, 1, 0, 1, 2)
        grid.addWidget(self.cancel_button, 1, 2)
        grid.addWidget(self.verdict, 2, 0, 1, 3)
        grid.setColumnStretch(1, 1)
        self.retranslate()


    def retranslate(self) -> None:
        self.label.setText(self.tr("Expected SHA-256:"))
        self.expected.setPlaceholderText(self.tr("paste the hash from the download page (optional)"))
        self.button.setText(self.tr("Check file hash"))
        self.cancel_button.setText(self.tr("Cancel"))
        self._render()

    def set_path(self, path: str | None, expected: str | None = None) -> None:
        self.cancel()
        self.path, self.outcome = path, None
        self.expected.setText(expected or "")
        self._render()

    def start(self) -> None:
        if not self.path or self.task is not None:
            return
        self.outcome = None
        self.progress.setValue(0)
        self.task = run_task(actions.hash_file, self.path, self.expected.text().strip() or None,
                             on_done=self._on_done, on_error=self._on_error, on_progress=self._on_progress,
                             wants_progress=True, wants_cancel=True)
        self._render()

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def _on_progress(self, value: object) -> None:  # (done, total) from core's hashing
        self.progress.setValue(int(actions.fraction(value) * 1000))

    def _on_done(self, model: CheckedModel) -> None:
        task, self.task = self.task, None
        if model.path == self.path:
            if task is not None and task.cancelled:
                self.outcome = ("cancelled", None)  # the report keeps no "cancelled" row
            else:
                self.outcome = ("done", model)
                self.hashed.emit(model)
        self._render()

    def _on_error(self, error: BaseException) -> None:
        task, self.task = self.task, None
        self.outcome = ("cancelled", None) if task is not None and task.cancelled else ("failed", error)
        self._render()

    def _render(self) -> None:
        running = self.task is not None
        self.progress.setVisible(running)
        self.cancel_button.setVisible(running)
        self.button.setEnabled(not running and self.path is not None)
        self.verdict.setText(self._verdict_text())
        self.verdict.setVisible(bool(self.verdict.text()))

    def _verdict_text(self) -> str:
        if self.outcome is None:
            return ""
        kind, value = self.outcome
        if kind == "cancelled":
            return self.tr("Hash check cancelled.")
        if kind == "failed":
            return self.tr("Hash check failed: {error}").format(error=actions.error_text(value))
        check = actions.hash_check(value)
        return check.message.render() if check is not None else ""
