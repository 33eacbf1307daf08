"""What the engine rebuild is doing: the phase in words, a progress bar (a percentage while compiling, busy
otherwise), Cancel, and afterwards the outcome (the error's sentence and next step when it failed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.engine.rebuild import Phase, RebuildProgress
from app.core.problem import UserError
from app.ui.i18n import Retranslating
from app.ui.widgets.problem_view import evidence_text, problem_text

if TYPE_CHECKING:
    from app.core.engine.selftest import EngineCheck
    from app.ui.steps.machine.engine_rebuild import EngineRebuild


class RebuildBox(Retranslating, QWidget):
    """Follows an ``EngineRebuild`` (``follow``); hidden until a rebuild starts, or while not ``relevant``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rebuild: EngineRebuild | None = None
        self.state = "idle"  # idle | running | cancelling | failed | done
        self._step: RebuildProgress | None = None
        self._error: BaseException | None = None
        self.relevant = True
        self.status = QLabel(self, wordWrap=True, textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse,
                             textFormat=Qt.TextFormat.PlainText)
        self.progress = QProgressBar(self)
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(10)
        self.cancel_button = QPushButton(self)
        self.cancel_button.clicked.connect(self._cancel)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.progress, 1)
        row.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.status)
        layout.addLayout(row)
        self.retranslate()

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
        self._render()

    def clear(self) -> None:
        """Forget a finished rebuild's outcome (a running one keeps showing)."""
        if self.state in ("failed", "done"):
            self.state, self._error = "idle", None
            self._render()

    # --- the rebuild's reports -------------------------------------------------------------------

    def _on_started(self) -> None:
        self.state, self._step, self._error = "running", None, None
        self._render()

    def _on_progress(self, step: RebuildProgress | None) -> None:
        if step is not None:
            self._step = step
        if self.rebuild is not None and self.rebuild.cancelling:
            self.state = "cancelling"
        self._render()

    def _on_finished(self, _check: EngineCheck) -> None:
        self.state = "done"
        self._render()

    def _on_failed(self, error: BaseException) -> None:
        self.state, self._error = "failed", error
        self._render()

    def _cancel(self) -> None:
        if self.rebuild is not None:
            self.rebuild.cancel()

    # --- rendering -------------------------------------------------------------------------------


    def retranslate(self) -> None:
        self.cancel_button.setText(self.tr("Cancel"))
        self._render()

    def _render(self) -> None:
        active = self.state in ("running", "cancelling")
        self.setVisible(self.relevant and self.state != "idle")
        self.progress.setVisible(active)
        self.cancel_button.setVisible(active)
        self.cancel_button.setEnabled(self.state == "running")
        step = self._step
        if self.state == "running" and step is not None and step.phase is Phase.BUILDING and step.fraction is not None:
            fraction = step.fraction
            self.progress.setRange(0, 100)
            self.progress.setValue(int(fraction * 100))
        else:
            self.progress.setRange(0, 0)  # busy: probing, testing, starting, cancelling
        self.status.setText(self.status_text())

    def status_text(self) -> str:
        if self.state == "cancelling":
            return self.tr("Cancelling the rebuild…")
        gpu = self.rebuild.gpu if self.rebuild is not None else None
        if self.state == "done" and gpu:
            return self.tr("The built-in engine was rebuilt with {backend} for the graphics card and passed its "
                           "test.").format(backend=_label(gpu))
        if self.state == "done":
            return self.tr("The engine was rebuilt for this processor and passed its test.")
        if self.state == "failed":
            return self._error_text(self._error)
        if self.state != "running":
            return ""
        if gpu:
            return self._gpu_text(gpu)
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
            self.status.setToolTip("")
            return self.tr("The engine could not be rebuilt: {error}").format(error=error)
        self.status.setToolTip(evidence_text(error, last=20))
        return problem_text(error)


def _label(gpu: str) -> str:
    """The backend's own name ("CUDA", "Vulkan"): a product name, the same in every language."""
    return {"cuda": "CUDA", "vulkan": "Vulkan"}.get(gpu, gpu)
