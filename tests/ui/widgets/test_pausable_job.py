"""PausableJob: the one Pause/Resume/Cancel rule of the download rows (Get a model, the GPU engine)."""

from __future__ import annotations

from app.ui.widgets.job_row import JobRow, JobState
from app.ui.widgets.pausable_job import PausableJob


class Row(PausableJob):
    def __init__(self) -> None:
        self.job = JobRow()
        self.task = None
        self._stop = None
        self.runs = 0

    def _sentence(self, state: JobState) -> str:
        return state.value

    def _run(self) -> None:
        self.runs += 1

    def _render(self) -> None:
        pass


def test_pause_then_resume_runs_the_worker_again_only_when_the_paused_one_ended(qtbot):
    row = Row()
    qtbot.addWidget(row.job)
    row.job.start("running")
    row.toggle_pause()
    assert row.job.state is JobState.PAUSED and row._stop is not None and row._stop.value == "pause"
    row.task = object()  # the paused worker has not ended yet: resuming lets it go on
    row.toggle_pause()
    assert row.job.state is JobState.RUNNING and row._stop is None and row.runs == 0
    row.toggle_pause()
    row.task = None  # now it has ended: resuming starts a new one
    row.toggle_pause()
    assert row.runs == 1


def test_cancel_starts_only_for_a_running_or_paused_job(qtbot):
    row = Row()
    qtbot.addWidget(row.job)
    assert not row._begin_cancel()
    row.job.start("running")
    assert row._begin_cancel()
    assert row.job.state is JobState.CANCELLING and row._stop is not None and row._stop.value == "cancel"
