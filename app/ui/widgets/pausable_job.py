"""Pause, Resume and the start of Cancel for a job row whose worker polls a stop reason (a download): shared by the
Get a model row and the GPU engine box. The worker's ``should_stop`` answers ``self._stop``; a pause keeps what was
downloaded, a resume runs the worker again when the paused one has ended."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from app.core.problem import UserError
from app.ui.widgets.job_row import JobRow, JobState
from app.ui.workers import Task

if TYPE_CHECKING:
    from app.core.hub.download_progress import StopReason

logger = logging.getLogger(__name__)


def stop_reason(value: str) -> StopReason:
    """A StopReason, imported when first needed (the hub package stays off the window's first paint)."""
    from app.core.hub.download_progress import StopReason

    return StopReason(value)


class PausableJob:
    """Mixed into a widget that has a ``job`` row, a ``task`` and ``_stop``, and says its own sentences."""

    job: JobRow
    task: Task | None
    _stop: StopReason | None
    error: UserError | None
    FAILURE_LOGGED = "the job failed unexpectedly"  # the log's words for an error that is not a UserError

    def _sentence(self, state: JobState) -> str:
        raise NotImplementedError

    def _run(self) -> None:
        raise NotImplementedError

    def _render(self) -> None:
        raise NotImplementedError

    def _ended(self) -> None:
        raise NotImplementedError

    def _unexpected(self, error: BaseException) -> UserError:
        """The sentence for an error the core did not word (logged with its traceback first)."""
        raise NotImplementedError

    def toggle_pause(self) -> None:
        if self.job.state is JobState.RUNNING:
            self._stop = stop_reason("pause")
            self.job.pause(self._sentence(JobState.PAUSED))
        elif self.job.state is JobState.PAUSED:
            self._stop = None  # a worker still running simply goes on
            self.job.resume(self._sentence(JobState.RUNNING))
            if self.task is None:
                self._run()
        self._render()

    def _begin_cancel(self) -> bool:
        """Ask the worker to stop for good; False when nothing runs or waits to be cancelled."""
        if self.job.state not in (JobState.RUNNING, JobState.PAUSED):
            return False
        self._stop = stop_reason("cancel")
        self.job.cancelling(self._sentence(JobState.CANCELLING))
        return True

    def _on_error(self, error: BaseException) -> None:
        """The worker ended without a result: paused, cancelled or failed."""
        task, self.task = self.task, None
        reason = str(getattr(error, "reason", "") or "")
        if reason == "pause":
            closing = task is not None and task.cancelled  # the window closes: what was kept waits for the next try
            if self.job.state is JobState.RUNNING and not closing:  # resumed before the worker saw the pause
                self._run()
            elif self.job.state is JobState.RUNNING:
                self.job.pause(self._sentence(JobState.PAUSED))
            else:
                self.job.say(self._sentence(JobState.PAUSED))
            self._render()
            return
        if reason == "cancel":
            self._cancelled()
            return
        if not isinstance(error, UserError):
            logger.error(self.FAILURE_LOGGED, exc_info=error)
        self.error = error if isinstance(error, UserError) else self._unexpected(error)
        self.job.finish(JobState.FAILED, self._sentence(JobState.FAILED))
        self._ended()

    def _cancelled(self) -> None:
        self.task = None
        self.job.finish(JobState.CANCELLED, self._sentence(JobState.CANCELLED))
        self._ended()
