"""The Machine step's "Get the GPU engine for this card": the official llama.cpp build that fits the NVIDIA card,
fetched, checked on the card and used, for a user whose engines cannot use the card (core:
app/core/hub/engine_fetch.py), and the builds the app fetched before, each with Use and Remove.

The offer shows while an NVIDIA card is here, the GPU notice says the chosen engine cannot use it, no llama-server
found on this computer can (the notice would offer it) and the app fetched none: first the plan (which build,
why, its size) or, where it cannot be fetched, core's sentence and next step instead of the button. Get runs in a
worker; its progress is core's sentence per phase on the shared job row (Pause/Resume, Cancel), a failure core's
problem. A checked build is used at once (``useRequested(launcher)``, as the notice's "use this llama-server");
removing the one in use goes back to the built-in engine (``builtInRequested``).

The MachinePanel builds this box after the hardware scan, never before the window's first paint.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.core.problem import Fix, FixAction, UserError, fix_action
from app.core.text import human_bytes
from app.ui.i18n import Retranslating
from app.ui.steps.machine import gpu_fetch_work as work
from app.ui.widgets import look
from app.ui.widgets.job_row import JobRow, JobState
from app.ui.widgets.pausable_job import PausableJob
from app.ui.widgets.problem_view import ProblemView, render
from app.ui.workers import Task, run_task

if TYPE_CHECKING:
    from app.core.hardware.report import HardwareReport
    from app.core.hub.download_progress import StopReason
    from app.core.hub.engine_fetch import FetchPlan, FetchProgress
    from app.core.launch.cuda_facts import CardFacts
    from app.core.launch.fetched_engines import FetchedEngine
    from app.core.launch.gpu_engine import GpuEngineWarning

logger = logging.getLogger(__name__)

LLAMA_SERVER = "llama-server"  # app.core.launch.config.BACKEND_LLAMA_SERVER (not imported at start-up)


class EngineRow(QWidget):
    """One fetched build: what it is and where it was checked, Use (when another engine is chosen) and Remove."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.engine: FetchedEngine | None = None
        self.label = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText,
                            textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse)
        self.use_button = QPushButton(self)
        self.remove_button = QPushButton(self)
        line = QHBoxLayout(self)
        line.setContentsMargins(0, 0, 0, 0)
        line.addWidget(self.label, 1)
        line.addWidget(self.use_button)
        line.addWidget(self.remove_button)


class GpuFetchBox(Retranslating, PausableJob, QFrame):
    """Inputs: ``set_report`` (the scan), ``set_engine`` (the engine Settings chose), ``set_warning`` (the GPU
    notice's). Signals: ``useRequested(str)`` the fetched llama-server to use; ``builtInRequested()`` the engine in
    use was removed."""

    useRequested = Signal(str)
    builtInRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.card: CardFacts | None = None
        self.engine: tuple[str, str | None] | None = None
        self.proxy: str | None = None  # the user's own proxy for downloads (None: the system's)
        self.warning: GpuEngineWarning | None = None
        self.plan: FetchPlan | None = None
        self.plan_error: UserError | None = None
        self._planned_for: CardFacts | None = None  # the card the plan (or its task) is for
        self._plan_asked = 0  # counts the plans asked for; an answer to an older one is dropped
        self._plan_task: Task | None = None
        self.engines: list[FetchedEngine] = []
        self._engines_task: Task | None = None
        self.task: Task | None = None  # the get (or a paused get's discard, or a removal)
        self.fix: FixAction | None = None  # what the running or paused get fetches
        self.progress: FetchProgress | None = None
        self.error: UserError | None = None
        self.outcome = ""  # "removed" | "" : what the last finished job was, for its sentence
        self._label = ""  # the build the job is about
        self._stop: StopReason | None = None  # what the worker's next poll answers
        self._confirming: FetchedEngine | None = None  # the build whose removal waits for Remove / Keep it
        self.title = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        look.bold(self.title)
        self.reason = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText,
                             textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse)
        self.get_button = QPushButton(self)
        self.get_button.clicked.connect(self._on_get_clicked)
        self.refusal = ProblemView(self)  # why it cannot be fetched, instead of the button
        self.plan_button = QPushButton(self)  # "Look again": a refusal the network or the release may cure
        self.plan_button.clicked.connect(self.plan_again)
        self.job = JobRow(self)
        self.job.cancelClicked.connect(self.cancel)
        self.job.actionClicked.connect(self.toggle_pause)
        self.failure = ProblemView(self)
        self.rows: list[EngineRow] = []
        self._rows_box = QVBoxLayout()
        self._rows_box.setContentsMargins(0, 0, 0, 0)
        self.confirm = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.confirm_remove = QPushButton(self)
        self.confirm_remove.clicked.connect(self._on_remove_confirmed)
        self.confirm_keep = QPushButton(self)
        self.confirm_keep.clicked.connect(lambda: self._ask_removal(None))
        confirm_buttons = QHBoxLayout()
        confirm_buttons.setContentsMargins(0, 0, 0, 0)
        confirm_buttons.addStretch(1)
        confirm_buttons.addWidget(self.confirm_remove)
        confirm_buttons.addWidget(self.confirm_keep)
        get_line = QHBoxLayout()
        get_line.setContentsMargins(0, 0, 0, 0)
        get_line.addWidget(self.get_button)
        get_line.addWidget(self.plan_button)
        get_line.addStretch(1)
        layout = QVBoxLayout(self)
        for widget in (self.title, self.reason):
            layout.addWidget(widget)
        layout.addLayout(get_line)
        for widget in (self.refusal, self.job, self.failure):
            layout.addWidget(widget)
        layout.addLayout(self._rows_box)
        layout.addWidget(self.confirm)
        layout.addLayout(confirm_buttons)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.retranslate()

    # --- inputs ------------------------------------------------------------------------------------

    def set_report(self, report: HardwareReport | None) -> None:
        """The scan: the first NVIDIA card is the one a build is chosen for; the fetched builds are read again."""
        self.card = work.card_of(report)
        self.look_up_engines()
        self._want_plan()
        self._render()

    def set_engine(self, backend: str, server_bin: str | None) -> None:
        self.engine = (backend, server_bin or None)
        self._render()

    def set_proxy(self, proxy: str | None) -> None:
        """The proxy "Get a model" uses (the user's own; None: the system's): the plan is read through it again."""
        if (proxy or None) != self.proxy:
            self.proxy = proxy or None
            self.plan_again()

    def set_warning(self, warning: GpuEngineWarning | None) -> None:
        """The GPU notice's warning; once the offer is gone (the engine can use the card), a failed or cancelled
        get's outcome goes with it."""
        self.warning = warning
        if not self.offered and self.job.state in (JobState.FAILED, JobState.CANCELLED):
            self.error = None
            self.job.reset()
        self._want_plan()
        self._render()

    @property
    def offered(self) -> bool:
        """An NVIDIA card, an engine that cannot use it, and no GPU engine here to use instead."""
        warning = self.warning
        return (self.card is not None and warning is not None and not self.engines
                and not any(fix.kind is Fix.SWITCH_ENGINE for fix in warning.fixes))

    def in_use(self, engine: FetchedEngine) -> bool:
        return self.engine == (LLAMA_SERVER, engine.launcher)

    # --- the plan and the fetched builds (workers) -------------------------------------------------

    def plan_again(self) -> None:
        """Read the plan anew (the release's listing may be reachable now); not while a get is under way."""
        if not self.job.state.active:
            self._planned_for = None
            self._want_plan()
            self._render()

    def _want_plan(self) -> None:
        card = self.card
        if not self.offered or card is None or card == self._planned_for or self.job.state.active:
            return
        self._plan_asked += 1
        asked = self._plan_asked
        self._planned_for, self.plan, self.plan_error = card, None, None
        self._plan_task = run_task(work.plan, card, work.SETUP, self.proxy, owner=self,
                                   on_done=lambda plan: self._planned(asked, plan, None),
                                   on_error=lambda error: self._planned(asked, None, error))

    def _planned(self, asked: int, plan: FetchPlan | None, error: BaseException | None) -> None:
        self._plan_task = None
        if asked != self._plan_asked:
            return  # an older plan (another card, another proxy): the new one is on its way
        self.plan = plan
        if error is not None:
            logger.warning("no plan for a GPU engine", exc_info=error)
            self.plan_error = error if isinstance(error, UserError) else _generic_plan_error(error)
        self._render()

    def look_up_engines(self) -> None:
        if self._engines_task is None:
            self._engines_task = run_task(work.registered, owner=self, on_done=self._on_engines,
                                          on_error=self._on_engines_failed)

    def _on_engines(self, engines: list[FetchedEngine]) -> None:
        self._engines_task = None
        self.engines = list(engines)
        self._want_plan()
        self._render()

    def _on_engines_failed(self, error: BaseException) -> None:
        self._engines_task = None
        logger.warning("the fetched GPU engines could not be read", exc_info=error)

    # --- Get, Pause/Resume, Cancel -----------------------------------------------------------------

    def _on_get_clicked(self) -> None:
        plan = self.plan
        if plan is not None and plan.build is not None and plan.refusal is None:
            self.apply(fix_action(Fix.GET_GPU_ENGINE, build=plan.build.kind.value))

    def apply(self, fix: FixAction) -> None:
        """Get the build ``fix`` names (``Fix.GET_GPU_ENGINE``); ignored while a job is under way."""
        if fix.kind is not Fix.GET_GPU_ENGINE or self.job.state.active or self.card is None:
            return
        plan = self.plan
        self.fix, self.progress, self.error, self.outcome = fix, None, None, ""
        self._label = plan.build.label if plan is not None and plan.build is not None else str(fix.get("build"))
        self._ask_removal(None)
        self.job.start(self._sentence(JobState.RUNNING), busy=True)
        self._run()
        self._render()

    def cancel(self) -> None:
        if not self._begin_cancel():
            return
        card, fix = self.card, self.fix
        if self.task is None and card is not None and fix is not None:  # paused: core's cancel removes what it kept
            self.task = run_task(work.discard, card, work.SETUP, fix.get("build"), self.plan, self.proxy,
                                 owner=self, on_done=lambda _none: self._cancelled(), on_error=self._on_error)
        self._render()

    def _run(self) -> None:
        card, fix = self.card, self.fix
        if card is None or fix is None:
            return
        self._stop = None
        self.task = run_task(work.get, card, work.SETUP, fix.get("build"), self.plan, self.proxy,
                             wants_progress=True, wants_cancel=True, owner=self, should_stop=lambda: self._stop,
                             on_progress=self._on_progress, on_done=self._on_done, on_error=self._on_error)

    def _on_progress(self, value: FetchProgress) -> None:
        self.progress = value
        if self.job.state is not JobState.RUNNING:
            return
        download = value.download
        if download is not None:
            self.job.set_progress(int(download.fraction * 1000), 1000, render(value.sentence))
        else:
            self.job.set_progress(0, 0, render(value.sentence))  # unpacking, asking, generating: a busy bar

    def _on_done(self, engine: FetchedEngine) -> None:
        self.task = None
        self.engines = [entry for entry in self.engines if entry.kind != engine.kind] + [engine]
        self.job.finish(JobState.DONE, self._sentence(JobState.DONE))
        self._ended()
        self.useRequested.emit(engine.launcher)  # the window chooses it in Settings; the steps follow
        self.look_up_engines()

    FAILURE_LOGGED = "getting the GPU engine failed unexpectedly"

    def _unexpected(self, error: BaseException) -> UserError:
        return _generic_error(error)

    def _ended(self) -> None:
        self._stop = None
        self._render()

    # --- Use and Remove ----------------------------------------------------------------------------

    def _use(self, engine: FetchedEngine) -> None:
        self.useRequested.emit(engine.launcher)

    def _ask_removal(self, engine: FetchedEngine | None) -> None:
        """Remove asks first (``engine``); None puts the question away."""
        self._confirming = engine
        self._render()

    def _on_remove_confirmed(self) -> None:
        engine = self._confirming
        if engine is None or self.job.state.active:
            return
        self._confirming = None
        self.fix, self.progress, self.error, self.outcome = None, None, None, "removed"
        self._label = engine.label
        was_used = self.in_use(engine)
        self.job.start(self._sentence(JobState.RUNNING))
        self.task = run_task(work.remove, engine.kind, owner=self,
                             on_done=lambda _removed: self._removed(engine, was_used), on_error=self._on_error)
        self._render()

    def _removed(self, engine: FetchedEngine, was_used: bool) -> None:
        self.task = None
        self.engines = [entry for entry in self.engines if entry.kind != engine.kind]
        self.job.finish(JobState.DONE, self._sentence(JobState.DONE))
        self._ended()
        self._want_plan()
        if was_used:
            self.builtInRequested.emit()
        self.look_up_engines()

    # --- texts ---------------------------------------------------------------------------------------

    def retranslate(self) -> None:
        self.title.setText(self.tr("A GPU engine for this card"))
        self.confirm_remove.setText(self.tr("Remove"))
        self.confirm_keep.setText(self.tr("Keep it"))
        self.plan_button.setText(self.tr("Look again"))
        if self.job.state is not JobState.IDLE:
            self.job.say(self._sentence(self.job.state))
        self._render()

    def _sentence(self, state: JobState) -> str:
        label, removing = self._label, self.outcome == "removed"
        if state is JobState.RUNNING and removing:
            return self.tr("Removing the {label} build…").format(label=label)
        if state is JobState.RUNNING:
            if self.progress is not None:
                return render(self.progress.sentence)
            return self.tr("Starting to get the {label} build…").format(label=label)
        if state is JobState.PAUSED:
            if self.task is not None and self._stop is not None:
                return self.tr("Pausing…")
            return self.tr("Paused; what was downloaded is kept. Resume continues from there.")
        if state is JobState.CANCELLING:
            return self.tr("Cancelling…")
        if state is JobState.CANCELLED:
            return self.tr("Cancelled; nothing of the {label} build was kept.").format(label=label)
        if state is JobState.FAILED and removing:
            return self.tr("The {label} build could not be removed.").format(label=label)
        if state is JobState.FAILED:
            return self.tr("Getting the {label} build stopped.").format(label=label)
        if state is JobState.DONE and removing:
            return self.tr("The {label} build was removed and its folder deleted.").format(label=label)
        if state is JobState.DONE and self.progress is not None:
            return render(self.progress.sentence)  # core's: the build is ready and can use the card
        if state is JobState.DONE:
            return self.tr("The {label} build is ready.").format(label=label)
        return ""

    def _render(self) -> None:
        busy = self.job.state.active
        self.job.set_action(None if self.fix is None else
                            self.tr("Resume") if self.job.state is JobState.PAUSED else self.tr("Pause"))
        self._render_offer(busy)
        failed = self.job.state is JobState.FAILED and self.error is not None
        self.failure.set_problem(self.error if failed else None, evidence_title=self._evidence_title)
        self.failure.setVisible(failed)
        self._render_engines(busy)
        self.setVisible(self.offered or busy or bool(self.engines) or self.job.has_content)

    def _render_offer(self, busy: bool) -> None:
        plan, offered = self.plan, self.offered and not busy
        refusal = self.plan_error or (plan.refusal if plan is not None else None)
        can_get = offered and plan is not None and refusal is None and plan.build is not None
        self.title.setVisible(self.offered or busy or bool(self.engines) or self.job.has_content)
        self.reason.setVisible(offered and refusal is None)
        self.reason.setText(self._reason_text(plan))
        self.get_button.setVisible(can_get)
        if can_get and plan is not None and plan.build is not None:
            size = plan.total_bytes
            self.get_button.setText(
                self.tr("Get the GPU engine for this card ({label}, {size})").format(
                    label=plan.build.label, size=human_bytes(size)) if size is not None
                else self.tr("Get the GPU engine for this card ({label})").format(label=plan.build.label))
        self.refusal.set_problem(refusal if offered else None, evidence_title=self._evidence_title)
        self.refusal.setVisible(offered and refusal is not None)
        kind = str(getattr(refusal, "kind", ""))
        self.plan_button.setVisible(offered and refusal is not None and kind != "no_build")  # nothing fits: final

    def _reason_text(self, plan: FetchPlan | None) -> str:
        if plan is None:
            return self.tr("Finding the llama.cpp build that fits this card…")
        host = urlsplit(plan.urls[0]).hostname if plan.urls else None
        size = plan.total_bytes
        if size is not None and host:
            amount = self.tr("It downloads {size} from {host}.").format(size=human_bytes(size), host=host)
        elif host:
            amount = self.tr("It downloads from {host}.").format(host=host)
        else:
            amount = ""
        tested = self.tr("The build is tested on the card before the app uses it.")
        return " ".join(part for part in (render(plan.reason), amount, render(plan.checked_against), tested) if part)

    def _render_engines(self, busy: bool) -> None:
        while len(self.rows) < len(self.engines):
            row = EngineRow(self)
            row.use_button.clicked.connect(lambda _=False, r=row: r.engine is not None and self._use(r.engine))
            row.remove_button.clicked.connect(
                lambda _=False, r=row: r.engine is not None and self._ask_removal(r.engine))
            self._rows_box.addWidget(row)
            self.rows.append(row)
        for index, row in enumerate(self.rows):
            engine = self.engines[index] if index < len(self.engines) else None
            row.engine = engine
            row.setVisible(engine is not None)
            if engine is None:
                continue
            used = self.in_use(engine)
            text = self.tr("The {label} build of llama.cpp {tag}, fetched by this app and checked on {device}.").format(
                label=engine.label, tag=engine.tag, device=engine.device)
            row.label.setText(text + (" " + self.tr("The app uses it now.") if used else ""))
            row.use_button.setText(self.tr("Use it"))
            row.use_button.setVisible(not used)
            row.use_button.setEnabled(not busy)
            row.remove_button.setText(self.tr("Remove…"))
            row.remove_button.setEnabled(not busy)
        confirming = self._confirming
        if confirming is not None and confirming not in self.engines:
            confirming = self._confirming = None
        asking = confirming is not None and not busy
        for widget in (self.confirm, self.confirm_remove, self.confirm_keep):
            widget.setVisible(asking)
        if confirming is not None:
            text = self.tr("Remove the {label} build? Its folder is deleted: {folder}").format(
                label=confirming.label, folder=confirming.folder)
            if self.in_use(confirming):
                text += "\n" + self.tr("The app uses it now; after the removal it uses the built-in engine.")
            self.confirm.setText(text)

    def _evidence_title(self, count: int) -> str:
        return self.tr("What was checked ({count})").format(count=count)


def _generic_error(error: BaseException) -> UserError:
    from app.core.problem import error_detail
    from app.core.text import T

    return UserError(T("Getting the GPU engine failed: {error}", "获取显卡引擎失败：{error}",
                       error=error_detail(error)), T("Try again.", "请重试。"))


def _generic_plan_error(error: BaseException) -> UserError:
    from app.core.problem import error_detail
    from app.core.text import T

    return UserError(T("The app could not work out which llama.cpp build fits this card: {error}",
                       "应用无法确定哪个 llama.cpp 版本适合这张显卡：{error}", error=error_detail(error)),
                     T("Download a llama.cpp build for the card yourself and choose its llama-server in Settings "
                       "(Advanced).",
                       "请自行下载适合这张显卡的 llama.cpp 版本，并在设置（高级）中选择其中的 llama-server。"))
