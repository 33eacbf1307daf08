"""The SHA-256 row of the Model step: expected hash field, "Check file hash", progress with Cancel, verdict.

Hashing runs ``validate(..., compute_sha256=True)`` in a worker (the core caches digests, so a second
check of the same file is instant); the verdict is the core's own sha256 check sentence, in the job row
(``app.ui.widgets.job_row``) that shows the progress and Cancel while the hash runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGridLayout, QLabel, QLineEdit, QPushButton, QWidget

from app.ui.i18n import Retranslating
from app.ui.steps.model import model_actions as actions
from app.ui.widgets.job_row import JobRow, JobState
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
        self.backend: str | None = None  # the session engine's backend (set_path)
        self.task: Task | None = None
        self._hashing: str | None = None  # the file the running task hashes
        self.checked: CheckedModel | BaseException | None = None  # the last run's checks (DONE) or error (FAILED)
        self.label = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.expected = QLineEdit(self)
        self.expected.setClearButtonEnabled(True)
        self.expected.editingFinished.connect(lambda: self.expectedHashChanged.emit(self.expected.text().strip()))
        self.button = QPushButton(self)
        self.button.clicked.connect(self.start)
        self.job = JobRow(self)  # progress and Cancel while hashing; the verdict afterwards
        self.job.cancelClicked.connect(self.cancel)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.label, 0, 0)
        grid.addWidget(self.expected, 0, 1)
        grid.addWidget(self.button, 0, 2)
        grid.addWidget(self.job, 1, 0, 1, 3)
        grid.setColumnStretch(1, 1)
        self.retranslate()

    def retranslate(self) -> None:
        self.label.setText(self.tr("Expected SHA-256:"))
        self.expected.setPlaceholderText(self.tr("paste the hash from the download page (optional)"))
        self.button.setText(self.tr("Check file hash"))
        if not self.job.state.active:
            self.job.say(self._verdict_text(self.job.state))
        self._render()

    def set_path(self, path: str | None, expected: str | None = None, backend: str | None = None) -> None:
        """``backend``: the engine the model runs with; the hashed file's projector row is judged for it."""
        self.cancel()
        self.path, self.backend = path, backend
        self.expected.setText(expected or "")
        if self.task is None:
            self.job.reset()
        self._render()

    def start(self) -> None:
        if not self.path or self.task is not None:
            return
        self.checked, self._hashing = None, self.path
        self.task = run_task(actions.hash_file, self.path, self.expected.text().strip() or None, backend=self.backend,
                             on_done=self._on_done, on_error=self._on_error, on_progress=self._on_progress,
                             wants_progress=True, wants_cancel=True)
        self.job.start(busy=False)
        self._render()

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.job.cancelling()

    def _on_progress(self, value: object) -> None:  # (done, total) from core's hashing
        self.job.set_progress(int(actions.fraction(value) * 1000), 1000)

    def _on_done(self, model: CheckedModel) -> None:
        task, self.task = self.task, None
        if model.path != self.path:
            self.job.reset()  # hashed a file the step has left
        elif task is not None and task.cancelled:
            self._finish(JobState.CANCELLED)  # the report keeps no "cancelled" check row
        else:
            self.checked = model
            self._finish(JobState.DONE)
            self.hashed.emit(model)
        self._render()

    def _on_error(self, error: BaseException) -> None:
        task, self.task = self.task, None
        if self._hashing != self.path:
            self.job.reset()
        elif task is not None and task.cancelled:
            self._finish(JobState.CANCELLED)
        else:
            self.checked = error
            self._finish(JobState.FAILED)
        self._render()

    def _render(self) -> None:
        self.button.setEnabled(self.task is None and self.path is not None)

    def _finish(self, state: JobState) -> None:
        self.job.finish(state, self._verdict_text(state))

    def _verdict_text(self, state: JobState) -> str:
        value = self.checked
        if state is JobState.CANCELLED:
            return self.tr("Hash check cancelled.")
        if state is JobState.FAILED and isinstance(value, BaseException):
            return self.tr("Hash check failed: {error}").format(error=actions.error_text(value))
        check = actions.hash_check(value) if state is JobState.DONE and not isinstance(value, BaseException) else None
        return check.message.render() if check is not None else ""
