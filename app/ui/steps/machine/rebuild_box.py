"""What the engine rebuild is doing: the phase in words, a progress bar (a percentage while compiling, busy
otherwise), Cancel, and afterwards the outcome (the error's sentence and next step when it failed), in a job row
(``app.ui.widgets.job_row``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.core.problem import UserError
from app.ui.i18n import Retranslating
from app.ui.widgets.job_row import JobRow, JobState
from app.ui.widgets.problem_view import evidence_text, problem_text

if TYPE_CHECKING:
    from app.core.engine.rebuild import RebuildProgress  # the builder loads with a rebuild, not at start-up
    from app.core.engine.selftest import EngineCheck
    from app.ui.steps.machine.engine_rebuild import EngineRebuild


class RebuildBox(Retranslating, QWidget):
    """Follows an ``EngineRebuild`` (``follow``); hidden until a rebuild starts, or while not ``relevant``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rebuild: EngineRebuild | None = None
        self._step: RebuildProgress | None = None
        self._error: BaseException | None = None
        self.relevant = True
        self.job = JobRow(self)
        self.job.cancelClicked.connect(self._cancel)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.job)
        self.retranslate()

    @property
    def state(self) -> JobState:
        return self.job.state

    @property
    def active(self) -> bool:
        """A rebuild runs (or is being cancelled)."""
        return self.job.state.active

    def follow(self, rebuild: EngineRebuild) -> None:
        self.rebuild = rebuild
        rebuild.started.connect(self._on_started)
        rebuild.progress.connect(self._on_progress)
        rebuild.finished.connect(self._on_finished)
        rebuild.failed.connect(self._on_failed)
        if rebuild.running:
            self._on_started()

    def set_relevant(self, relevant: bool) -> None:
        self.relevant = relevant
        self._show()

    def clear(self) -> None:
        """Forget a finished rebuild's outcome (a running one keeps showing)."""
        if self.job.state.finished:
            self._error = None
            self.job.reset()
            self._show()

    # --- the rebuild's reports -------------------------------------------------------------------

    def _on_started(self) -> None:
        self._step, self._error = None, None
        self.job.start(self.status_text(JobState.RUNNING))
        self._show()

    def _on_progress(self, step: RebuildProgress | None) -> None:
        if step is not None:
            self._step = step
        if self.rebuild is not None and self.rebuild.cancelling:
            self.job.cancelling(self.status_text(JobState.CANCELLING))
        if self.job.state is JobState.RUNNING:
            done = self._building_fraction()
            self.job.set_progress(0 if done is None else int(done * 100), 0 if done is None else 100,
                                  self.status_text(JobState.RUNNING))  # busy: probing, testing, starting

    def _on_finished(self, _check: EngineCheck) -> None:
        self.job.finish(JobState.DONE, self.status_text(JobState.DONE))
        self._show()

    def _on_failed(self, error: BaseException) -> None:
        self._error = error
        self.job.finish(JobState.FAILED, self.status_text(JobState.FAILED))
        self._show()

    def _cancel(self) -> None:
        if self.rebuild is not None:
            self.rebuild.cancel()
            if self.rebuild.cancelling:
                self.job.cancelling(self.status_text(JobState.CANCELLING))

    # --- rendering -------------------------------------------------------------------------------

    def retranslate(self) -> None:
        self.job.say(self.status_text(self.job.state))
        self._show()

    def _show(self) -> None:
        self.setVisible(self.relevant and self.job.has_content)

    def _building_fraction(self) -> float | None:
        from app.core.engine.rebuild import Phase

        step = self._step
        return step.fraction if step is not None and step.phase is Phase.BUILDING else None

    def status_text(self, state: JobState) -> str:
        if state is JobState.CANCELLING:
            return self.tr("Cancelling the rebuild…")
        gpu = self.rebuild.gpu if self.rebuild is not None else None
        if state is JobState.DONE and gpu:
            return self.tr("The built-in engine was rebuilt with {backend} for the graphics card and passed its "
                           "test.").format(backend=_label(gpu))
        if state is JobState.DONE:
            return self.tr("The engine was rebuilt for this processor and passed its test.")
        if state is JobState.FAILED:
            return self._error_text(self._error)
        if state is not JobState.RUNNING:
            return ""
        if gpu:
            return self._gpu_text(gpu)
        from app.core.engine.rebuild import Phase

        phase = self._step.phase if self._step is not None else None
        fraction = self._step.fraction if self._step is not None else None
        if phase is Phase.PROBING:
            return self.tr("Rebuilding the engine: testing which instructions this processor runs…")
        if phase is Phase.BUILDING and fraction is not None:
            return self.tr("Rebuilding the engine for this processor: {percent} %").format(percent=int(fraction * 100))
        if phase is Phase.BUILDING:
            return self.tr("Rebuilding the engine for this processor…")
        if phase is Phase.TESTING:
            return self.tr("Rebuilding the engine: testing the new engine on this processor…")
        return self.tr("Rebuilding the engine for this processor (a few minutes)…")

    def _gpu_text(self, gpu: str) -> str:
        from app.core.engine.rebuild import Phase

        fraction = self._step.fraction if self._step is not None else None
        if self._step is not None and self._step.phase is Phase.BUILDING and fraction is not None:
            return self.tr("Rebuilding the built-in engine with {backend} for the graphics card: {percent} % (this "
                           "can take half an hour)").format(backend=_label(gpu), percent=int(fraction * 100))
        if self._step is not None and self._step.phase is Phase.TESTING:
            return self.tr("Rebuilding the built-in engine: testing the new engine…")
        return self.tr("Rebuilding the built-in engine with {backend} for the graphics card (this can take half an "
                       "hour)…").format(backend=_label(gpu))

    def _error_text(self, error: BaseException | None) -> str:
        if not isinstance(error, UserError):
            self.job.status.setToolTip("")
            return self.tr("The engine could not be rebuilt: {error}").format(error=error)
        self.job.status.setToolTip(evidence_text(error, last=20))
        return problem_text(error)


def _label(gpu: str) -> str:
    """The backend's own name ("CUDA", "Vulkan"): a product name, the same in every language."""
    return {"cuda": "CUDA", "vulkan": "Vulkan"}.get(gpu, gpu)
