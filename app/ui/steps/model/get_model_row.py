"""The download row of "Get a model" in the Model step: what is downloading, bytes / speed / time left on the shared
job row (app.ui.widgets.job_row), Pause / Resume and Cancel; a failure in the app's one problem shape.

The download (core ``download_model``) runs in a worker. Pause and Cancel are answers to its ``should_stop`` poll:
pause keeps the partial file (Resume starts the download again and it continues from there), cancel removes this
model's files. When it is done the row emits ``ready(path, sha256)`` and the panel opens the file like any model.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.core.problem import UserError
from app.core.text import human_bytes
from app.ui.i18n import Retranslating
from app.ui.steps.model import get_model_work as work
from app.ui.widgets.job_row import JobRow, JobState
from app.ui.widgets.pausable_job import PausableJob
from app.ui.widgets.problem_view import ProblemView, render
from app.ui.workers import Task, run_task

if TYPE_CHECKING:
    from app.core.hub.download_progress import DownloadProgress, StopReason
    from app.core.hub.files import HubModel

logger = logging.getLogger(__name__)


class GetModelRow(Retranslating, PausableJob, QWidget):
    """Signals: ``ready(str path, object sha256 or None)`` when the model is on disk and verified;
    ``busyChanged(bool)`` when a download starts or ends (paused counts as under way: one at a time)."""

    ready = Signal(str, object)
    busyChanged = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model: HubModel | None = None
        self.choice: work.HubChoice | None = None
        self.folder: Path | None = None  # None: the app's model folder
        self.elsewhere: tuple[str, ...] = ()
        self.task: Task | None = None
        self.progress: DownloadProgress | None = None
        self.error: UserError | None = None
        self.path: str | None = None  # where the last finished download is
        self.done: work.Downloaded | None = None
        self._stop: StopReason | None = None  # what the worker's next poll answers
        self.job = JobRow(self)
        self.job.cancelClicked.connect(self.cancel)
        self.job.actionClicked.connect(self.toggle_pause)
        self.problem = ProblemView(self)
        self.problem.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.job)
        layout.addWidget(self.problem)
        self.retranslate()
        self._render()

    @property
    def busy(self) -> bool:
        """A download under way or paused."""
        return self.job.state.active

    # --- the user's actions -----------------------------------------------------------------------

    def start(self, model: HubModel, choice: work.HubChoice, folder: Path | None = None,
              elsewhere: tuple[str, ...] = ()) -> None:
        """Download ``model`` (or continue its partial file); ignored while another one is under way.
        ``elsewhere``: files on this computer that may be this model already (checked by SHA-256 first)."""
        if self.busy:
            return
        self.model, self.choice, self.folder, self.elsewhere = model, choice, folder, elsewhere
        self.progress, self.error, self.path, self.done = None, None, None, None
        self.job.start(self._sentence(JobState.RUNNING), busy=True)
        self._run()
        self._render()
        self.busyChanged.emit(True)

    def cancel(self) -> None:
        if not self._begin_cancel():
            return
        if self.task is None:  # paused: nothing runs; remove what the pause kept
            model, folder = self.model, self.folder
            self.task = run_task(_remove, model, folder, owner=self, on_done=lambda _none: self._cancelled(),
                                 on_error=self._on_error)

    # --- the worker -------------------------------------------------------------------------------

    def _run(self) -> None:
        model, choice = self.model, self.choice
        if model is None or choice is None:
            return
        self._stop = None
        self.task = run_task(work.download, model, choice, self.folder, self.elsewhere, wants_progress=True,
                             wants_cancel=True,
                             owner=self,
                             should_stop=lambda: self._stop, on_progress=self._on_progress,
                             on_done=self._on_done, on_error=self._on_error)

    def _on_progress(self, value: DownloadProgress) -> None:
        self.progress = value
        if self.job.state is JobState.RUNNING:
            self.job.set_progress(int(value.fraction * 1000), 1000, self._sentence(JobState.RUNNING))

    def _on_done(self, done: work.Downloaded) -> None:
        self.task = None
        model = self.model
        self.done, self.path = done, str(done.path)
        self.job.finish(JobState.DONE, self._sentence(JobState.DONE))
        self._ended()
        sha = model.parts[0].sha256 if model is not None and len(model.parts) == 1 else None
        self.ready.emit(self.path, sha)

    FAILURE_LOGGED = "the download failed unexpectedly"

    def _unexpected(self, error: BaseException) -> UserError:
        return _generic(error)

    def _ended(self) -> None:
        self._stop = None
        self._render()
        self.busyChanged.emit(False)

    # --- texts ------------------------------------------------------------------------------------

    def retranslate(self) -> None:
        if self.job.state is not JobState.IDLE:
            self.job.say(self._sentence(self.job.state))
        self._render()

    def _name(self) -> str:
        return self.model.name if self.model is not None else ""

    def _sentence(self, state: JobState) -> str:
        name, progress = self._name(), self.progress
        amount = render(progress.sentence()) if progress is not None else ""
        if state is JobState.RUNNING:
            if not amount:
                return self.tr("Downloading {name}…").format(name=name)
            return self.tr("Downloading {name}: {amount}").format(name=name, amount=amount)
        if state is JobState.PAUSED:
            if self.task is not None and self._stop is not None:
                return self.tr("Pausing {name}…").format(name=name)
            done = progress.done_bytes if progress is not None else 0
            total = progress.total_bytes if progress is not None else 0
            return self.tr("Paused: {name}, {done} of {total} downloaded. Resume continues where it stopped.").format(
                name=name, done=human_bytes(done), total=human_bytes(total))
        if state is JobState.CANCELLING:
            return self.tr("Cancelling…")
        if state is JobState.CANCELLED:
            return self.tr("Download of {name} cancelled; its partial file was removed.").format(name=name)
        if state is JobState.FAILED:
            return self.tr("The download of {name} stopped.").format(name=name)
        if state is JobState.DONE:
            return self._done_sentence()
        return ""

    def _done_sentence(self) -> str:
        done = self.done
        if done is None:
            return ""
        if done.already and done.verified:
            return self.tr("Already on this computer, checked against the Hub's SHA-256: {path}").format(
                path=done.path)
        if done.already:
            return self.tr("Already on this computer with the same size (the Hub publishes no SHA-256 for it): "
                           "{path}").format(path=done.path)
        if done.verified:
            return self.tr("Downloaded; its SHA-256 matches the Hub's: {path}").format(path=done.path)
        return self.tr("Downloaded (the Hub publishes no SHA-256 for it, so only its size was checked): "
                       "{path}").format(path=done.path)

    def _render(self) -> None:
        state = self.job.state
        self.job.set_action(self.tr("Resume") if state is JobState.PAUSED else self.tr("Pause"))
        failed = state is JobState.FAILED and self.error is not None
        self.problem.set_problem(self.error if failed else None)
        self.problem.setVisible(failed)
        self.setVisible(self.job.has_content or failed)


def _remove(model: HubModel | None, folder: Path | None) -> None:
    """Cancel while paused: the kept partial files go."""
    from app.core.hub.download import remove_model_files

    if model is not None:
        remove_model_files(model, folder)


def _generic(error: BaseException) -> UserError:
    from app.core.problem import error_detail
    from app.core.text import T

    return UserError(T("The download failed: {error}", "下载失败：{error}", error=error_detail(error)),
                     T("Try again, or choose another source.", "请重试，或选择其他来源。"))


