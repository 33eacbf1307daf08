""""Find safe settings": runs the probe (real test loads) in a worker, lists attempts as they finish,
can be cancelled, and hands the measured recommendation to the Settings step."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QListView,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.core.problem import UserError
from app.core.session import ModelSession
from app.core.text import human_bytes
from app.ui.i18n import Retranslating
from app.ui.widgets import look
from app.ui.widgets.job_row import JobRow, JobState
from app.ui.widgets.problem_view import problem_text
from app.ui.widgets.status_icon import status_icon
from app.ui.workers import Task, run_task

if TYPE_CHECKING:  # the types only: the probe's modules load in the worker, with the first run
    from app.core.gguf.model_info import ModelInfo
    from app.core.hardware.report import HardwareReport
    from app.core.launch.config import LaunchConfig
    from app.core.probe import Attempt, ProbeProgress, ProbeResult, Recommendation


def probe_call(info: ModelInfo, config: LaunchConfig, hardware: HardwareReport | None,
               progress: Callable[[ProbeProgress], None], cancel: Callable[[], bool],
               max_context: bool = False, **made: Any) -> ProbeResult:  # worker thread
    """``made``: the ``backend`` and ``plan`` the model session already has for ``config`` (see ``session_made``)."""
    from app.core.probe import ProbeOptions, run_probe

    return run_probe(info, config, hardware, ProbeOptions(max_context=max_context), progress=progress, cancel=cancel,
                     **made)


def session_made(session: ModelSession, config: LaunchConfig) -> dict[str, Any]:
    """The engine and the plan the session already made for ``config`` (each only when it is for this config):
    the probe uses them instead of looking up and planning again."""
    made: dict[str, Any] = {}
    backend = session.backend_for(config)
    if backend is not None:
        made["backend"] = backend
    if session.plan is not None and session.plan_config == config:
        made["plan"] = session.plan
    return made


class ProbeBox(Retranslating, QWidget):
    applyRequested = Signal(dict)  # {"gpu_layers": n, "ctx": n}
    finished = Signal(object)  # ProbeResult
    logLines = Signal(list)  # each test load's server log lines (str), for the Logs tab

    def __init__(self, parent: QWidget | None = None, *, session: ModelSession | None = None) -> None:
        super().__init__(parent)
        self.session = session if session is not None else ModelSession()  # its engine and plan, for the probe
        self.hardware: HardwareReport | None = None
        self._shown_path: str | None = None  # the model whose "as much context as fits" tick is shown
        self._task: Task | None = None
        # with the job's state: the run's result (DONE), its error (FAILED), or the profile's saved result (IDLE)
        self._outcome: ProbeResult | BaseException | None = None
        self.run_button = QPushButton(self)
        self.run_button.clicked.connect(self.run)
        self.job = JobRow(self, label_outside=True)  # the bar and Cancel beside the button, the sentence below
        self.job.cancelClicked.connect(self.cancel)
        self.status = self.job.status  # laid out under the "as much context as fits" tick
        self.max_context = QCheckBox(self)  # "as much context as fits": the probe searches up to the training length
        self.max_context.toggled.connect(self._render)
        self.attempts = QListWidget(self)
        self.attempts.setIconSize(QSize(16, 16))
        # a long row (a failure's sentence) wraps inside the column instead of needing a sideways scroll bar
        self.attempts.setWordWrap(True)
        self.attempts.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.attempts.setResizeMode(QListView.ResizeMode.Adjust)
        self.attempts.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.attempts.installEventFilter(self)
        self._attempt_values: list[Attempt] = []  # kept so a language switch can re-render the rows
        self._logged: list[Attempt] = []  # the attempts whose log lines went to the Logs tab in this run
        look.bold(self.run_button)
        self.run_button.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        row = QHBoxLayout()
        row.addWidget(self.run_button)
        row.addWidget(self.job, 1)
        row.addStretch(0)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.max_context)
        layout.addWidget(self.status)
        layout.addWidget(self.attempts)
        self.retranslate()

    @property
    def running(self) -> bool:
        return self._task is not None


    def retranslate(self) -> None:
        self.run_button.setText(self.tr("Find safe settings"))
        self.run_button.setToolTip(self.tr(
            "Starts the model a few times with different settings and keeps the largest one that really works."))
        self.max_context.setToolTip(self.tr(
            "Tests longer contexts too, up to what the model was trained for, and keeps the longest that fits."))
        for row in range(len(self._attempt_values)):
            self.attempts.item(row).setText(self._row_text(row))
        self._render()

    # --- inputs ----------------------------------------------------------------------------------

    def set_hardware(self, report: HardwareReport | None) -> None:
        self.hardware = report

    # what it probes is the session's: its model (while it has settings), config, saved and last result

    @property
    def info(self) -> ModelInfo | None:
        return self.session.info if self.session.config is not None else None

    @property
    def config(self) -> LaunchConfig | None:
        return self.session.config

    @property
    def result(self) -> ProbeResult | None:
        """The last "Find safe settings" of the session's model (None while one runs)."""
        return self.session.probe

    def show_config(self) -> None:
        """The session's config changed (an edit, a fix): the superseded sentence and the tick follow it."""
        self._render()

    def show_model(self) -> None:
        """The session's model changed (another one, or none while it is checked or when it cannot run): the
        result its profile remembered (``ModelSession.saved_probe``), no run."""
        self.cancel()
        path = self.session.path if self.info is not None else None
        if path is None or path != self._shown_path:
            self.max_context.setChecked(False)  # "as much context as fits" is this model's choice, not the next one's
        self._shown_path = path
        self._outcome = self.session.saved_probe if path is not None else None
        self._clear_attempts()
        self.job.finish(JobState.IDLE)
        self._render()

    # --- running ---------------------------------------------------------------------------------

    def run(self) -> None:
        if self.running or self.info is None or self.config is None:
            return
        self._clear_attempts()
        self._logged = []
        self.session.set_probe(None)
        generation = self.session.generation  # the model this run measures
        self._outcome = None
        self.job.start()
        self._task = run_task(probe_call, self.info, self.config, self.hardware, owner=self,
                              on_done=lambda result: self._on_done(result, generation),
                              on_error=lambda error: self._on_error(error, generation),
                              on_progress=self._on_progress, wants_progress=True, wants_cancel=True,
                              max_context=self._wants_max_context(), **session_made(self.session, self.config))
        self._render()

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self.job.cancelling()
            self._render()

    def _on_progress(self, step: ProbeProgress) -> None:
        if step.last is not None and step.phase != "done":
            self._add_attempt(step.last)
        if step.last is not None:
            self._log_attempt(step.last)
        if self.job.state is JobState.RUNNING:  # until the first load is measured the bar only says "busy"
            measured = step.max_attempts > 0 and step.attempt > 1
            self.job.set_progress(step.attempt - 1 if measured else 0, step.max_attempts if measured else 0,
                                  step.message.render())

    def _on_done(self, result: ProbeResult, generation: int | None = None) -> None:
        self._task = None
        if generation is not None and generation != self.session.generation:
            return  # measured for a model the session has left (the box shows the new one already)
        self.session.set_probe(result)
        self._clear_attempts()
        for attempt in result.attempts:
            self._add_attempt(attempt)
        self._outcome = result
        self.job.finish(JobState.DONE)
        self._render()
        self.finished.emit(result)
        if result.recommendation:
            self.applyRequested.emit(result.recommendation.changes())

    def _on_error(self, error: BaseException, generation: int | None = None) -> None:
        from app.core.probe.attempt import ProbeCancelled  # loaded by the run that failed: costs nothing now

        task, self._task = self._task, None
        if generation is not None and generation != self.session.generation:
            return  # a run for a model the session has left (cancelled when it left)
        cancelled = (task is not None and task.cancelled) or isinstance(error, ProbeCancelled)
        self._outcome = None if cancelled else error
        self.job.finish(JobState.CANCELLED if cancelled else JobState.FAILED)
        self._render()

    def _log_attempt(self, attempt: Attempt) -> None:
        """Its server's log lines to the Logs tab, once, after a line that says which test load they are."""
        if attempt.log_lines and not any(attempt is logged for logged in self._logged):
            self._logged.append(attempt)
            self.logLines.emit([f"==== {self.attempt_text(attempt)} ====", *attempt.log_lines])

    # --- rendering -------------------------------------------------------------------------------

    def _add_attempt(self, attempt: Attempt) -> None:
        self._attempt_values.append(attempt)
        row = len(self._attempt_values) - 1
        item = QListWidgetItem(status_icon("ok" if attempt.ok else "error"), self._row_text(row))
        self.attempts.addItem(item)
        self.attempts.scrollToBottom()
        self._fit_attempts()

    def _clear_attempts(self) -> None:
        self._attempt_values = []
        self.attempts.clear()

    def _fit_attempts(self) -> None:
        """As tall as its last five rows (wrapped ones count their lines); more rows scroll."""
        line = max(self.attempts.fontMetrics().height() + 6, 20)
        view, count = self.attempts, self.attempts.count()
        view.doItemsLayout()  # wrapped rows' heights for the list's present width
        heights = [max(view.visualItemRect(view.item(i)).height(), line) for i in range(max(count - 5, 0), count)]
        heights = heights or [line]
        self.attempts.setFixedHeight(sum(heights) + 2 * self.attempts.frameWidth() + 6)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.attempts and event.type() == QEvent.Type.Resize:
            self._fit_attempts()  # wrapped rows take more or fewer lines at the list's new width
        return super().eventFilter(watched, event)

    def _row_text(self, row: int) -> str:
        """An attempt's row; the search loads a passing setting a second time before it trusts it (and retries a
        failure that says nothing about memory), so a repeat says so instead of looking like the same row twice."""
        attempt = self._attempt_values[row]
        text = self.attempt_text(attempt)
        same = (attempt.gpu_layers, attempt.ctx, attempt.n_cpu_moe)
        if any((a.gpu_layers, a.ctx, a.n_cpu_moe) == same for a in self._attempt_values[:row]):
            text += " " + self.tr("(the same settings again, to be sure)")
        return text

    def attempt_text(self, attempt: Attempt) -> str:
        blocks = self._block_count()
        if attempt.n_cpu_moe > 0 and blocks:  # a model with experts: where they went, in words
            from app.core.plan.placement import Placement  # with a probe's first row, not before the first paint

            where = Placement(blocks, attempt.gpu_layers, attempt.n_cpu_moe).describe().render()
            head = self.tr("{where}, {ctx} tokens").format(where=where, ctx=attempt.ctx)
        else:
            head = self.tr("{layers} GPU layers, {ctx} tokens").format(layers=attempt.gpu_layers, ctx=attempt.ctx)
        if attempt.ok:
            from app.core.probe.wording import full_context_note  # here: the probe's package loads with its first run

            full = full_context_note(attempt)  # the projection the probe judged, beside the measured peak
            return head + " — " + self.tr("works (loaded in {s} s, peak RAM {rss})").format(
                s=f"{attempt.load_seconds or attempt.seconds:.1f}", rss=human_bytes(attempt.peak_rss_bytes)) + (
                f"; {full.render()}" if full is not None else "") + self._speed_text(attempt)
        reason = attempt.reason or (attempt.diagnosis.message if attempt.diagnosis is not None else None)
        return head + " — " + (reason.render() if reason is not None else self.tr("failed"))

    def _speed_text(self, attempt: Attempt) -> str:
        """The speeds the test request measured, when the engine reported them."""
        if not attempt.generation_tps:
            return ""
        text = " · " + self.tr("{gen} tokens/s writing").format(gen=f"{attempt.generation_tps:.1f}")
        if attempt.prompt_tps:
            text += ", " + self.tr("{pp} tokens/s reading the prompt").format(pp=f"{attempt.prompt_tps:.0f}")
        return text

    def _block_count(self) -> int:
        """The model's layer count; 0 when unknown (a row then counts GPU layers instead of placing experts)."""
        return int(self.info.block_count or 0) if self.info is not None else 0

    def _trained_ctx(self) -> int:
        return int(self.info.context_length or 0) if self.info is not None else 0

    def _wants_max_context(self) -> bool:
        return self.max_context.isVisibleTo(self) and self.max_context.isChecked()

    def _render(self, *_: object) -> None:
        trained = self._trained_ctx()
        self.max_context.setText(self.tr("As much context as fits (up to {ctx} tokens)").format(ctx=trained))
        self.max_context.setVisible(self.config is not None and trained > int(self.config.ctx))
        self.max_context.setEnabled(not self.running)
        self.run_button.setEnabled(not self.running and self.info is not None and self.config is not None)
        self.attempts.setVisible(self.attempts.count() > 0)
        self.job.say(self._status_text(self.job.state, self._outcome))

    def _status_text(self, state: JobState, value: ProbeResult | BaseException | None) -> str:
        if state is JobState.RUNNING:
            return self.tr("Testing settings with real loads of the model…")
        if state is JobState.CANCELLING:
            return self.tr("Cancelling; stopping the test server…")
        if state is JobState.CANCELLED:
            return self.tr("Cancelled. Your settings were not changed.")
        if state is JobState.FAILED:
            message = problem_text(value, labelled=False, joiner=" ") if isinstance(value, UserError) else str(value)
            return self.tr("The test could not run: {error}").format(error=message)
        result = None if isinstance(value, BaseException) else value
        if state is JobState.DONE and result is not None:
            text = result.summary().render()
            if result.cached:
                text += " " + self.tr("(Cached result from an earlier test with the same settings.)")
            return text + self._in_use_text(result, self.tr("Applied."))
        if result is not None and result.recommendation is not None:  # IDLE: the result the profile saved
            rec = result.recommendation
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(result.saved_at or time.time()))
            if rec.n_cpu_moe > 0 and self._block_count():
                text = self.tr("Last measured on {when} (cached): {where}, {ctx} tokens.").format(
                    when=when, where=rec.placement(self._block_count()).render(), ctx=rec.ctx)
            else:
                text = self.tr("Last measured on {when} (cached): {layers} GPU layers, {ctx} tokens.").format(
                    when=when, layers=rec.gpu_layers, ctx=rec.ctx)
            return text + self._in_use_text(result, "")
        return self.tr("Not measured yet. The numbers above are an estimate; "
                       "\"Find safe settings\" proves them with real test loads.")

    def _in_use_text(self, result: ProbeResult, applied: str) -> str:
        """" Applied." while the settings are the measured ones; once they changed (a crash's fix, an edit), a
        sentence that says this measurement is superseded and by what."""
        if result.recommendation is None:
            return ""
        changed = self._changed_since(result.recommendation)
        if not changed:
            return " " + applied if applied else ""
        return " " + self.tr("Superseded: the settings changed after this test ({changes}).").format(
            changes=", ".join(changed))

    def _changed_since(self, measured: Recommendation) -> list[str]:
        """Each measured setting the Settings step no longer has, as "context size 4096 → 2048"."""
        if self.config is None:
            return []
        names = {"ctx": self.tr("context size"), "gpu_layers": self.tr("GPU layers"),
                 "n_cpu_moe": self.tr("layers with experts on the processor")}
        return [f"{names.get(key, key)} {value} → {getattr(self.config, key)}"
                for key, value in measured.changes().items() if getattr(self.config, key, value) != value]
