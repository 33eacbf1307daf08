"""The one "rebuild the engine for this processor" job of the window, run off the GUI thread.

The Machine step and the crash card both show it (progress, Cancel, the outcome), but there is only ever one
rebuild at a time: ``EngineRebuild`` runs the rebuild step in a worker and re-emits what it reports. The step is
an attribute (``step``) so that the controller that owns it can be given another one (tests pass a slow fake).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Signal

from app.ui.workers import Task, run_task

if TYPE_CHECKING:  # imported when a rebuild starts: faster start-up
    from app.core.engine.rebuild import RebuildProgress
    from app.core.engine.selftest import EngineCheck
    from app.core.text import Text


class RebuildStep(Protocol):
    """A rebuild run on a worker: ``gpu`` is passed only for a graphics-card backend (a plain rebuild calls
    ``step(progress, cancel)``)."""

    def __call__(self, progress: Callable[[RebuildProgress], None], cancel: Callable[[], bool],
                 gpu: str | None = None) -> EngineCheck: ...


REBUILT_ENGINE = "embedded"  # the only engine this app can rebuild: the built-in one


def rebuild_embedded(progress: Callable[[RebuildProgress], None], cancel: Callable[[], bool],
                     gpu: str | None = None) -> EngineCheck:  # worker
    from app.core.engine.rebuild import rebuild_embedded as rebuild

    return rebuild(progress, cancel, gpu)


def cannot_rebuild_reason(gpu: str | None = None) -> Text | None:
    """Why this installation cannot rebuild its engine (or, ``gpu``, that backend of it), or None when it can."""
    from app.core.engine.rebuild import cannot_rebuild_reason as reason

    return reason(gpu)


def other_engine(engine: str) -> str:
    return "llama-server" if engine == REBUILT_ENGINE else REBUILT_ENGINE


class EngineRebuild(QObject):
    """Signals (GUI thread): ``started()``, ``progress(RebuildProgress)``, ``finished(EngineCheck)`` and
    ``failed(error)`` (a ``UserError`` with a sentence and a next step, also when cancelled).

    ``start(gpu)`` rebuilds with a graphics-card backend ("cuda" or "vulkan"); ``gpu`` says which one runs."""

    started = Signal()
    progress = Signal(object)
    finished = Signal(object)
    failed = Signal(object)

    def __init__(self, step: RebuildStep | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.step: RebuildStep = step or rebuild_embedded
        self._task: Task | None = None
        self.last_progress: RebuildProgress | None = None
        self.gpu: str | None = None  # the graphics-card backend of the running (or last) rebuild

    @property
    def running(self) -> bool:
        return self._task is not None

    @property
    def cancelling(self) -> bool:
        return self._task is not None and self._task.cancelled

    def start(self, gpu: str | None = None) -> bool:
        """Begin the rebuild (``gpu``: with that graphics-card backend); False when one is already running (it is
        not started twice)."""
        if self._task is not None:
            return False
        self.last_progress, self.gpu = None, gpu
        step = partial(self.step, gpu=gpu) if gpu else self.step  # a plain rebuild: step(progress, cancel) as before
        self._task = run_task(step, wants_progress=True, wants_cancel=True, on_progress=self._on_progress,
                              on_done=self._on_done, on_error=self._on_error)
        self.started.emit()
        return True

    def cancel(self) -> None:
        if self._task is not None and not self._task.cancelled:
            self._task.cancel()
            self.progress.emit(self.last_progress)  # followers re-render as "cancelling"

    def _on_progress(self, step: RebuildProgress) -> None:
        if self._task is None:
            return
        self.last_progress = step
        self.progress.emit(step)

    def _on_done(self, check: EngineCheck) -> None:
        self._task = None
        self.finished.emit(check)

    def _on_error(self, error: BaseException) -> None:
        self._task = None
        self.failed.emit(error)
