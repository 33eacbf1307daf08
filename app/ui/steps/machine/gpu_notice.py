"""The "no silent CPU fallback" notice: an NVIDIA graphics card is here but the chosen engine cannot use it.

It shows core's ``GpuEngineWarning`` (sentence, next step, evidence) with one button per fix: "use the
llama-server in <folder>" (``useServerRequested(path)``) and "rebuild the built-in engine with CUDA/Vulkan"
(started on the window's one ``EngineRebuild`` when the notice follows it, else ``rebuildRequested(gpu)``).
The look-up runs programs (the finder asks each llama-server found), so it runs in a worker, once per engine.
The Machine and the Settings step each show one.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QPushButton, QVBoxLayout, QWidget

from app.core.problem import Fix, FixAction
from app.ui.i18n import Retranslating
from app.ui.steps.machine.rebuild_box import RebuildBox
from app.ui.widgets.problem_view import ProblemView
from app.ui.workers import Task, run_task

if TYPE_CHECKING:
    from app.core.hardware.report import HardwareReport
    from app.core.launch.gpu_engine import GpuEngineWarning
    from app.ui.steps.machine.engine_rebuild import EngineRebuild

GPU_LABELS = {"cuda": "CUDA", "vulkan": "Vulkan"}  # product names, the same in every language


def look_up(report: HardwareReport, engine: str, server_bin: str | None) -> GpuEngineWarning | None:  # worker
    from app.core.launch.gpu_engine import engine_gpu_warning

    return engine_gpu_warning(report, engine, server_bin)


def release_name(program: Path) -> str:
    """The folder that names a build ("llama-b6500-bin-ubuntu-cuda-x64", Jan's "linux-cuda-12-x64"), not bin/."""
    folder = program.parent
    while folder.name in ("bin", "build", "Release") and folder.parent != folder:
        folder = folder.parent
    return folder.name or str(folder)


class GpuEngineNotice(Retranslating, QFrame):
    """Hidden unless core says the engine cannot use the NVIDIA GPU that is here."""

    useServerRequested = Signal(str)  # the llama-server file to use
    rebuildRequested = Signal(str)  # "cuda" | "vulkan", when no EngineRebuild is followed
    warningChanged = Signal(object)  # the GpuEngineWarning shown, or None (the Machine step's "get the GPU engine")

    def __init__(self, parent: QWidget | None = None, *, show_progress: bool = False) -> None:
        """``show_progress``: the notice shows the rebuild's progress itself (where no other box does)."""
        super().__init__(parent)
        self.warning: GpuEngineWarning | None = None
        self.rebuild: EngineRebuild | None = None
        self.buttons: list[QPushButton] = []
        self._wanted: tuple[HardwareReport, str, str | None] | None = None
        self._asked = 0  # counts the wishes; an answer to an older one is never shown
        self._task: Task | None = None
        self.setObjectName("gpuEngineNotice")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet("#gpuEngineNotice { border: 1px solid #e0a800; border-radius: 6px; background: #fff8e1; }")
        self.problem = ProblemView(self)
        self._buttons_box = QVBoxLayout()
        self._buttons_box.setContentsMargins(0, 0, 0, 0)
        self.progress_box = RebuildBox(self) if show_progress else None
        layout = QVBoxLayout(self)
        layout.addWidget(self.problem)
        layout.addLayout(self._buttons_box)
        if self.progress_box is not None:
            self.progress_box.hide()
            layout.addWidget(self.progress_box)
        self.hide()

    # --- inputs ------------------------------------------------------------------------------------

    def look_up(self, report: HardwareReport | None, engine: str, server_bin: str | None = None, *,
                again: bool = False) -> None:
        """Ask core (in a worker) whether ``engine`` can use this machine's NVIDIA GPU; no GPU: nothing to say.

        ``again``: the same wish asked anew (the engine was rebuilt), so an answer on its way is from before."""
        if report is None:
            return
        wanted = (report, engine, server_bin or None)
        if wanted == self._wanted and not again:
            return  # asked already: its answer is on its way or shown
        self._wanted = wanted
        self._asked += 1
        if not report.has_nvidia_gpu:
            self.set_warning(None)
        elif self._task is None:
            self._start_look_up(wanted)
        # else: the running look-up's answer is older than this wish; it is dropped and core is asked again

    def look_again(self) -> None:
        if self._wanted is not None:
            self.look_up(*self._wanted, again=True)

    def follow_rebuild(self, rebuild: EngineRebuild) -> None:
        """Start rebuilds on the window's one ``EngineRebuild``; look again when one is done."""
        self.rebuild = rebuild
        if self.progress_box is not None:
            self.progress_box.follow(rebuild)
        rebuild.started.connect(self._render_buttons)
        rebuild.failed.connect(self._render_buttons)
        rebuild.finished.connect(lambda _check: self._after_rebuild())

    def _start_look_up(self, wanted: tuple[HardwareReport, str, str | None]) -> None:
        asked = self._asked
        self._task = run_task(look_up, *wanted, owner=self,
                              on_done=lambda warning: self._looked_up(asked, warning),
                              on_error=lambda error: self._look_up_failed(asked, error))

    def _stale(self, asked: int) -> bool:
        """True when a newer wish came meanwhile: then core is asked again (no GPU here: nothing to ask)."""
        self._task = None
        if asked == self._asked:
            return False
        if self._wanted is not None and self._wanted[0].has_nvidia_gpu:
            self._start_look_up(self._wanted)
        return True

    def _looked_up(self, asked: int, warning: GpuEngineWarning | None) -> None:
        if not self._stale(asked):
            self.set_warning(warning)

    def _look_up_failed(self, asked: int, error: BaseException) -> None:
        self._stale(asked)  # the current wish failed: the other rows say what is wrong; this notice stays as it was

    def _after_rebuild(self) -> None:
        self._render_buttons()
        self.look_again()

    # --- the warning ------------------------------------------------------------------------------

    def set_warning(self, warning: GpuEngineWarning | None) -> None:
        self.warning = warning
        self.setVisible(warning is not None)
        self.retranslate()
        self.warningChanged.emit(warning)

    def retranslate(self) -> None:
        warning = self.warning
        self.problem.set_problem(warning, evidence_title=lambda count: self.tr("What was checked ({count})")
                                 .format(count=count))
        fixes = list(warning.fixes) if warning is not None else []
        while len(self.buttons) < len(fixes):
            index = len(self.buttons)
            button = QPushButton(self)
            button.clicked.connect(lambda _=False, i=index: self._apply(i))
            self._buttons_box.addWidget(button)
            self.buttons.append(button)
        for i, button in enumerate(self.buttons):
            button.setVisible(i < len(fixes))
            if i < len(fixes):
                button.setText(self.fix_text(fixes[i]))
                button.setToolTip(str(fixes[i].get("server_bin") or ""))  # the whole path; the label is short
        self._render_buttons()

    def fix_text(self, fix: FixAction) -> str:
        if fix.kind is Fix.SWITCH_ENGINE:
            return self.tr("Use the llama-server in {folder} ({backends})").format(
                folder=release_name(Path(str(fix.get("server_bin")))), backends=fix.get("backends") or "GPU")
        gpu = str(fix.get("gpu"))
        return self.tr("Rebuild the built-in engine with {backend}").format(backend=GPU_LABELS.get(gpu, gpu))

    def _render_buttons(self, *_: object) -> None:
        busy = self.rebuild is not None and self.rebuild.running
        fixes = list(self.warning.fixes) if self.warning is not None else []
        for button, fix in zip(self.buttons, fixes, strict=False):
            button.setEnabled(not (busy and fix.kind is Fix.REBUILD_ENGINE))

    def _apply(self, index: int) -> None:
        if self.warning is None or index >= len(self.warning.fixes):
            return
        fix = self.warning.fixes[index]
        if fix.kind is Fix.SWITCH_ENGINE:
            self.useServerRequested.emit(str(fix.get("server_bin")))
        elif fix.kind is Fix.REBUILD_ENGINE and self.rebuild is not None:
            self.rebuild.start(str(fix.get("gpu")))
        elif fix.kind is Fix.REBUILD_ENGINE:
            self.rebuildRequested.emit(str(fix.get("gpu")))
