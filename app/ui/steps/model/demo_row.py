"""The demo model's fetch row under the Model step's buttons: what is happening, a progress bar, Cancel.

The fetch (core ``get_demo_model``) runs in a worker; this row only renders its ``DemoProgress`` values and
its outcome. It is hidden while idle and after a success (the panel then opens the model); after a cancel
or a failure it keeps the sentence that says what happened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGridLayout, QLabel, QProgressBar, QPushButton, QWidget

from app.ui.i18n import Retranslating
from app.ui.steps.model import model_actions as actions
from app.ui.widgets import look
from app.ui.workers import Task, run_task

if TYPE_CHECKING:  # the demo code is imported when the demo is asked for: faster start-up
    from app.core.demo import DemoProgress, DemoResult


class DemoRow(Retranslating, QWidget):
    """Signals: ``ready(DemoResult)`` when a model is there to open; ``finished()`` after every run."""

    ready = Signal(object)
    finished = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.task: Task | None = None
        self.last_progress: DemoProgress | None = None
        self.outcome: tuple[str, DemoResult | BaseException] | None = None  # ("done" | "cancelled" | "failed", value)
        self.status = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        look.hint(self.status)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(10)
        self.cancel_button = QPushButton(self)
        self.cancel_button.clicked.connect(self.cancel)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.status, 0, 0, 1, 2)
        grid.addWidget(self.progress, 1, 0)
        grid.addWidget(self.cancel_button, 1, 1)
        grid.setColumnStretch(0, 1)
        self.retranslate()

    @property
    def busy(self) -> bool:
        return self.task is not None


    def retranslate(self) -> None:
        self.cancel_button.setText(self.tr("Cancel"))
        self._render()

    def start(self, options: dict | None = None) -> None:
        """Fetch (or find) the demo model; ``options`` go to core's fetcher (tests point pip at a local index)."""
        if self.task is not None:
            return
        self.outcome, self.last_progress = None, None
        self.progress.setRange(0, 0)  # busy until pip says how big the download is
        self.task = run_task(actions.get_demo_model, on_done=self._on_done, on_error=self._on_error,
                             on_progress=self._on_progress, wants_progress=True, wants_cancel=True,
                             **dict(options or {}))
        self.cancel_button.setEnabled(True)
        self._render()

    def cancel(self) -> None:
        if self.task is not None and not self.task.cancelled:
            self.task.cancel()
            self.cancel_button.setEnabled(False)
            self._render()

    def _on_progress(self, value: DemoProgress) -> None:
        self.last_progress = value
        fraction = value.fraction
        if fraction is None:
            self.progress.setRange(0, 0)
        else:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(fraction * 1000))
        self._render()

    def _on_done(self, result: DemoResult) -> None:
        self.task = None
        self.outcome = ("done", result)
        self._render()
        self.ready.emit(result)
        self.finished.emit()

    def _on_error(self, error: BaseException) -> None:
        from app.core.demo import DemoCancelled

        task, self.task = self.task, None
        cancelled = isinstance(error, DemoCancelled) or (task is not None and task.cancelled)
        self.outcome = ("cancelled", error) if cancelled else ("failed", error)
        self._render()
        self.finished.emit()

    def _render(self) -> None:
        running = self.task is not None
        self.progress.setVisible(running)
        self.cancel_button.setVisible(running)
        self.status.setText(self._status_text(running))
        self.setVisible(running or (self.outcome is not None and self.outcome[0] != "done"))

    def _status_text(self, running: bool) -> str:
        if running and self.task.cancelled:
            return self.tr("Cancelling…")
        if running:
            if self.last_progress is None:
                return self.tr("Getting the demo model…")
            return self.last_progress.message.render()
        if self.outcome is None or self.outcome[0] == "done":
            return ""
        kind, error = self.outcome
        if kind == "cancelled" and getattr(error, "kept_download", False):
            return error.message.render()  # only the copy was stopped: core's sentence says what is kept
        if kind == "cancelled":
            return self.tr("The demo model was not fetched: cancelled, nothing was kept.")
        return self.tr("Could not get the demo model: {error}").format(error=actions.error_text(error))
