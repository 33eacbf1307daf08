"""The demo model's fetch row under the Model step's buttons: what is happening, a progress bar, Cancel.

The fetch (core ``get_demo_model``) runs in a worker; this row only renders its ``DemoProgress`` values and
its outcome in a job row (``app.ui.widgets.job_row``). It is hidden while idle and after a success (the panel
then opens the model); after a cancel or a failure it keeps the sentence that says what happened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.core.problem import UserError
from app.ui.i18n import Retranslating
from app.ui.steps.model import model_actions as actions
from app.ui.widgets import look
from app.ui.widgets.job_row import JobRow, JobState
from app.ui.workers import Task, run_task

if TYPE_CHECKING:  # the demo code is imported when the demo is asked for: faster start-up
    from app.core.demo.fetch import DemoProgress, DemoResult


class DemoRow(Retranslating, QWidget):
    """Signals: ``ready(DemoResult)`` when a model is there to open; ``finished()`` after every run."""

    ready = Signal(object)
    finished = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.task: Task | None = None
        self.last_progress: DemoProgress | None = None
        self.error: BaseException | None = None  # why the last run ended (FAILED or CANCELLED)
        self.job = JobRow(self)
        look.hint(self.job.status)
        self.job.cancelClicked.connect(self.cancel)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.job)
        self.retranslate()

    @property
    def busy(self) -> bool:
        return self.task is not None

    def retranslate(self) -> None:
        self._say()

    def start(self, options: dict | None = None) -> None:
        """Fetch (or find) the demo model; ``options`` go to core's fetcher (tests point pip at a local index)."""
        if self.task is not None:
            return
        self.error, self.last_progress = None, None
        self.task = run_task(actions.get_demo_model, on_done=self._on_done, on_error=self._on_error,
                             on_progress=self._on_progress, wants_progress=True, wants_cancel=True,
                             **dict(options or {}))
        self.job.start(self._sentence(JobState.RUNNING))  # busy until pip says how big the download is
        self._show()

    def cancel(self) -> None:
        if self.task is not None and not self.task.cancelled:
            self.task.cancel()
            self.job.cancelling(self._sentence(JobState.CANCELLING))

    def _on_progress(self, value: DemoProgress) -> None:
        self.last_progress = value
        fraction = value.fraction
        if self.job.state is JobState.RUNNING:
            self.job.set_progress(0 if fraction is None else int(fraction * 1000), 0 if fraction is None else 1000,
                                  self._sentence(JobState.RUNNING))

    def _on_done(self, result: DemoResult) -> None:
        self.task = None
        self.job.finish(JobState.DONE)
        self._show()
        self.ready.emit(result)
        self.finished.emit()

    def _on_error(self, error: BaseException) -> None:
        from app.core.demo.errors import DemoCancelled

        task, self.task, self.error = self.task, None, error
        cancelled = isinstance(error, DemoCancelled) or (task is not None and task.cancelled)
        state = JobState.CANCELLED if cancelled else JobState.FAILED
        self.job.finish(state, self._sentence(state))
        self._show()
        self.finished.emit()

    def _say(self) -> None:
        self.job.say(self._sentence(self.job.state))
        self._show()

    def _show(self) -> None:
        self.setVisible(self.job.has_content)

    def _sentence(self, state: JobState) -> str:
        if state is JobState.CANCELLING:
            return self.tr("Cancelling…")
        if state is JobState.RUNNING and self.last_progress is None:
            return self.tr("Getting the demo model…")
        if state is JobState.RUNNING and self.last_progress is not None:
            return self.last_progress.message.render()
        error = self.error
        if state is JobState.CANCELLED and isinstance(error, UserError) and getattr(error, "kept_download", False):
            return error.message.render()  # only the copy was stopped: core's sentence says what is kept
        if state is JobState.CANCELLED:
            return self.tr("The demo model was not fetched: cancelled, nothing was kept.")
        if state is JobState.FAILED and error is not None:
            return self.tr("Could not get the demo model: {error}").format(error=actions.error_text(error))
        return ""
