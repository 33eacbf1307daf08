"""Step 3, Settings: context, GPU layers and parallel slots with a live memory plan, "Find safe settings",
the Advanced knobs and the exact command line.

Every change re-plans in a worker after a short pause (debounced), so typing never stalls the window.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.core.launch.config import BACKEND_LLAMA_SERVER, ConfigChanges, LaunchConfig
from app.core.session import ModelSession
from app.ui.i18n import Retranslating
from app.ui.steps.machine.gpu_notice import GpuEngineNotice
from app.ui.steps.settings import settings_preview as preview
from app.ui.steps.settings.advanced_form import AdvancedForm
from app.ui.steps.settings.plan_bars import PlanBars
from app.ui.steps.settings.probe_box import ProbeBox
from app.ui.steps.settings.workers_box import WorkersBox
from app.ui.widgets import look
from app.ui.widgets.collapsible import Collapsible
from app.ui.widgets.wheel_guard import guard_wheel
from app.ui.workers import Debouncer, Task, run_task

if TYPE_CHECKING:
    from app.core.gguf.model_info import ModelInfo
    from app.core.hardware.report import HardwareReport
    from app.core.plan.memory import MemoryPlan
    from app.core.probe.result import ProbeResult
    from app.core.text import Text
    from app.ui.steps.machine.engine_rebuild import EngineRebuild

CTX_STEP = 256


class SettingsPanel(Retranslating, QWidget):
    """The view of ``session.config``: the widgets show it, and every edit writes it back at once (``config()`` is
    the session's). Signals: ``configChanged(LaunchConfig)`` after any edit; ``planned(plan | None)`` once the
    plan and the engine for the newest config are in the session; ``probeFinished(result)`` after "Find safe
    settings" (the window stores it in the model's profile); ``engineChanged(backend, server_bin)`` when the chosen
    engine or llama-server file changes (also without a model)."""

    configChanged = Signal(object)
    engineChanged = Signal(str, object)
    planned = Signal(object)
    probeFinished = Signal(object)

    def __init__(self, parent: QWidget | None = None, *, debounce_ms: int = 250,
                 session: ModelSession | None = None) -> None:
        super().__init__(parent)
        self.session = session if session is not None else ModelSession()  # the model, its config and plan
        self.hardware: HardwareReport | None = None
        self.preview: preview.Preview | None = None
        self._plan_task: Task | None = None
        self._replan_again = False
        self._engine: tuple[str, str | None] | None = None
        self._debouncer = Debouncer(self._start_preview, debounce_ms, self)
        self._build()
        self.retranslate()
        self.setEnabled(False)

    def _build(self) -> None:
        self.ctx = QSpinBox(self)
        self.ctx.setRange(CTX_STEP, 1 << 20)
        self.ctx.setSingleStep(CTX_STEP)
        self.gpu_layers = QSlider(Qt.Orientation.Horizontal, self)
        self.gpu_layers.setPageStep(1)
        self.gpu_layers_label = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.parallel = QSpinBox(self)
        self.parallel.setRange(1, 64)
        guard_wheel(self.ctx, self.gpu_layers, self.parallel)
        self.plan_bars = PlanBars(self)
        self.gpu_notice = GpuEngineNotice(self, show_progress=True)  # an NVIDIA GPU, but an engine without GPU support
        self.gpu_notice.useServerRequested.connect(self.use_server)
        # why the built-in engine runs instead of llama-server, when it does
        self.engine_reason = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.engine_reason.setWordWrap(True)
        look.hint(self.engine_reason)
        self.engine_reason.hide()
        self._engine_reason: Text | None = None
        self.plan_text = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.plan_text.setWordWrap(True)
        self.use_plan = QPushButton(self)
        self.use_plan.clicked.connect(self.apply_plan_recommendation)
        self.probe = ProbeBox(self, session=self.session)
        self.probe.applyRequested.connect(self.apply_changes)
        self.probe.finished.connect(self._on_probe_finished)
        self.advanced = AdvancedForm(self)
        self.advanced_box = Collapsible("", self.advanced, self)
        self.workers = WorkersBox(self)
        self.workers_box = Collapsible("", self.workers, self)
        self.workers_box.hide()  # shown with the llama-server engine (_emit_engine)
        # off (the default): the server wants a key made for it, so web pages cannot use the model (LaunchConfig)
        self.keyless = QCheckBox(self)
        self.command = QLineEdit(self)
        self.command.setReadOnly(True)
        look.monospace(self.command)
        self.copy_command = QPushButton(self)
        self.copy_command.clicked.connect(self._copy_command)
        self.command_notes = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.command_notes.setWordWrap(True)
        look.hint(self.command_notes)
        self._layout()
        for spin in (self.ctx, self.parallel):
            spin.valueChanged.connect(self._edited)
        self.gpu_layers.valueChanged.connect(self._edited)
        self.advanced.changed.connect(self._edited)
        self.workers.changed.connect(self._sync_layer_range)
        self.workers.changed.connect(self._edited)
        self.keyless.toggled.connect(self._edited)

    def _layout(self) -> None:
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        labels = (QLabel(self, textFormat=Qt.TextFormat.PlainText) for _ in range(3))
        self.ctx_label, self.layers_label, self.parallel_label = labels
        layers_row = QHBoxLayout()
        layers_row.addWidget(self.gpu_layers, 1)
        layers_row.addWidget(self.gpu_layers_label)
        form.addRow(self.ctx_label, self.ctx)
        form.addRow(self.layers_label, layers_row)
        form.addRow(self.parallel_label, self.parallel)
        plan_row = QHBoxLayout()
        plan_row.addWidget(self.plan_text, 1)
        plan_row.addWidget(self.use_plan, 0, Qt.AlignmentFlag.AlignTop)
        command_row = QHBoxLayout()
        self.command_label = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        command_row.addWidget(self.command_label)
        command_row.addWidget(self.command, 1)
        command_row.addWidget(self.copy_command)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.gpu_notice)
        layout.addWidget(self.engine_reason)
        layout.addLayout(form)
        layout.addWidget(self.plan_bars)
        layout.addLayout(plan_row)
        layout.addWidget(self.probe)
        layout.addWidget(self.advanced_box)
        layout.addWidget(self.workers_box)
        layout.addWidget(self.keyless)
        layout.addLayout(command_row)
        layout.addWidget(self.command_notes)

    # --- translation -----------------------------------------------------------------------------


    def retranslate(self) -> None:
        self.ctx_label.setText(self.tr("Context (tokens)"))
        self.ctx.setToolTip(self.tr("How much text the model keeps in mind at once. More context needs more memory."))
        self.layers_label.setText(self.tr("Layers on the GPU"))
        self.parallel_label.setText(self.tr("Parallel requests"))
        self.parallel.setToolTip(self.tr("Each parallel request gets its own share of the context."))
        self.use_plan.setText(self.tr("Use these"))
        self.advanced_box.set_title(self.tr("Advanced"))
        self.workers_box.set_title(self.tr("Workers (other computers)"))
        self.keyless.setText(self.tr("Let other programs on this computer use the server without a key"))
        self.keyless.setToolTip(self.tr("Off: the server wants a key the app makes for it, so web pages open in your "
                                        "browser cannot use the model. The Server step shows the key for programs "
                                        "you run. On: any program on this computer can connect, web pages too."))
        self.command_label.setText(self.tr("Command:"))
        self.copy_command.setText(self.tr("Copy"))
        self.probe.retranslate()
        self.show_engine_reason(self._engine_reason)
        self.advanced.retranslate()
        self._render_layers_label()
        self._render_preview()

    # --- inputs from the other steps ---------------------------------------------------------------

    @property
    def info(self) -> ModelInfo | None:
        """The model whose settings are shown (None until the session has a config for it)."""
        return self.session.info if self.session.config is not None else None

    @property
    def plan(self) -> MemoryPlan | None:
        return self.session.plan

    def set_hardware(self, report: HardwareReport) -> None:
        self.hardware = report
        self.probe.set_hardware(report)
        self.gpu_notice.look_up(report, *self.engine())
        self._sync_layer_range()
        if self.session.config is not None:  # the GPU layer range may have changed: show the model's setting again
            self._apply_config(self.session.config)
            self._take_shown()
        self._debouncer.trigger()

    def show_model(self) -> None:
        """The session's model passed its checks and has its saved (or default) settings: show and plan them."""
        config = self.session.config
        self.setEnabled(config is not None)
        if config is None:
            return
        self.advanced.show_experts(_experts_layers(self.info))
        self._apply_config(config)
        self._take_shown()
        self.probe.show_model()
        self._debouncer.trigger()

    def _take_shown(self) -> None:
        """The session's config as the widgets show it (a layer count within the slider's range, a context
        within the model's): Start runs exactly what is shown."""
        self.session.set_config(self._shown_config())

    def clear_model(self) -> None:
        """No model to show (another one is being checked, or it failed its checks)."""
        self.preview = None
        self.probe.show_model()
        self.plan_bars.set_plan(None)
        self.setEnabled(False)
        self._render_preview()

    def _apply_config(self, config: LaunchConfig) -> None:
        for widget in (self.ctx, self.gpu_layers, self.parallel, self.keyless):
            widget.blockSignals(True)
        try:
            self.keyless.setChecked(not config.local_key)
            self._sync_layer_range()
            if self.info is not None and self.info.context_length:
                self.ctx.setMaximum(max(CTX_STEP, int(self.info.context_length)))
            self.ctx.setValue(int(config.ctx))
            top = self.gpu_layers.maximum()
            self.gpu_layers.setValue(top if config.gpu_layers < 0 else min(int(config.gpu_layers), top))
            self.parallel.setValue(int(config.parallel))
        finally:
            for widget in (self.ctx, self.gpu_layers, self.parallel, self.keyless):
                widget.blockSignals(False)
        self.advanced.set_values(config)
        self.workers.set_addresses(config.rpc_workers)
        self._render_layers_label()
        self._emit_engine()

    def _sync_layer_range(self) -> None:
        n_layer = int(self.info.block_count or 0) if self.info is not None else 0
        has_gpu = (self.hardware is not None and bool(self.hardware.gpus)) or bool(self.workers.addresses())
        self.gpu_layers.setRange(0, n_layer + 1 if has_gpu else 0)
        self.gpu_layers.setEnabled(has_gpu)

    # --- the launch config -----------------------------------------------------------------------

    def config(self) -> LaunchConfig | None:
        """The model's launch config: the session's one copy (None without a model that can run)."""
        return self.session.config

    def _shown_config(self) -> LaunchConfig | None:
        """What the widgets show, over the session's config (the fields they do not show are kept)."""
        if self.session.config is None:
            return None
        return self.session.config.with_changes(ctx=self.ctx.value(), gpu_layers=self.gpu_layers.value(),
                                       parallel=self.parallel.value(), **self.advanced.values(),
                                       rpc_workers=self.workers.addresses(), local_key=not self.keyless.isChecked())

    def apply_changes(self, changes: ConfigChanges | Mapping[str, Any]) -> None:
        """Apply a recommendation or a diagnosis fix, e.g. {"ctx": 2048, "gpu_layers": 12}, by core's one rule
        (``LaunchConfig.apply`` of a ``ConfigChanges``), as the supervisor and the command line do."""
        current = self.config()
        if current is None:
            return
        self._apply_config(current.apply(ConfigChanges(changes)))
        self._edited()

    def apply_plan_recommendation(self) -> None:
        if self.plan is not None and self.plan.recommended_ctx:
            self.apply_changes(ConfigChanges(ctx=self.plan.recommended_ctx,
                                             gpu_layers=self.plan.recommended_gpu_layers))

    def engine(self) -> tuple[str, str | None]:
        """(backend, server_bin) as the Advanced settings show them, with or without a model."""
        values = self.advanced.values()
        return values["backend"], values["server_bin"]

    def set_engine(self, backend: str) -> None:
        """Choose the engine (e.g. the Machine step's "use the other engine"); saved as the app-wide choice."""
        if self.config() is not None:
            self.apply_changes(ConfigChanges(backend=backend))
        else:
            self.advanced.backend.setCurrentIndex(1 if backend == BACKEND_LLAMA_SERVER else 0)

    def follow_rebuild(self, rebuild: EngineRebuild) -> None:
        """The GPU notice's rebuild button starts the window's one engine rebuild and shows its progress."""
        self.gpu_notice.follow_rebuild(rebuild)

    def use_server(self, server_bin: str) -> None:
        """Choose the llama-server engine with this file (the GPU notice's "use this llama-server")."""
        if self.config() is not None:
            self.apply_changes(ConfigChanges(backend=BACKEND_LLAMA_SERVER, server_bin=server_bin))
        else:
            self.advanced.set_engine(BACKEND_LLAMA_SERVER, server_bin)
            self._emit_engine()
        self.advanced_box.set_expanded(True)

    def engine_only_for_model(self) -> bool:
        """True when the user ticked "only for this model": the engine is this model's own, not the app-wide one."""
        return self.advanced.engine_only_for_model()

    def show_engine(self, backend: str, server_bin: str | None, *, only_for_model: bool = False) -> None:
        """Show an engine choice from the settings (the app-wide one, or the model's own before its config is
        shown); ``engineChanged`` follows when it differs, ``configChanged`` does not."""
        self.advanced.set_engine(backend, server_bin, only_for_model=only_for_model)
        self._emit_engine()

    def show_engine_reason(self, reason: Text | None) -> None:
        """The one sentence saying why the built-in engine runs instead of llama-server (None: hidden)."""
        self._engine_reason = reason
        self.engine_reason.setText(reason.render() if reason is not None else "")
        self.engine_reason.setVisible(reason is not None)

    def _emit_engine(self) -> None:
        engine = self.engine()
        if engine != self._engine:
            self._engine = engine
            self.workers.server_bin = engine[1]  # its rpc-server is the one shared
            self.workers_box.setVisible(engine[0] == BACKEND_LLAMA_SERVER)  # the built-in engine cannot use them
            self.gpu_notice.look_up(self.hardware, *engine)
            self.engineChanged.emit(*engine)

    def _edited(self, *_: object) -> None:
        self._render_layers_label()
        self._emit_engine()
        config = self._shown_config()
        if config is not None:
            self.session.set_config(config)
            self.probe.show_config()
            self.configChanged.emit(config)
            self._debouncer.trigger()

    def _on_probe_finished(self, result: ProbeResult) -> None:
        self.probeFinished.emit(result)  # the box put it in the session (only for the session's model)

    def _render_layers_label(self) -> None:
        if not self.gpu_layers.isEnabled():
            self.gpu_layers_label.setText(self.tr("no GPU: the processor does the work"))
            return
        value, top = self.gpu_layers.value(), self.gpu_layers.maximum()
        text = self.tr("all {n}").format(n=top) if value == top else self.tr("{n} of {top}").format(n=value, top=top)
        experts = self.advanced.values()["n_cpu_moe"]
        if experts and self.info is not None:  # a model with experts, some in RAM: say where everything goes
            from app.core.plan.placement import Placement

            text = Placement(int(self.info.block_count or 0), value, experts).describe().render()
        self.gpu_layers_label.setText(text)

    # --- plan + command line (worker) ------------------------------------------------------------

    def _start_preview(self) -> None:
        config = self.config()
        if config is None or self.info is None:
            return
        if self._plan_task is not None:
            self._replan_again = True  # one at a time; the newest config is planned right after
            return
        generation = self.session.generation
        self._plan_task = run_task(preview.compute_preview, self.info, config, self.hardware, owner=self,
                                   on_done=lambda result: self._on_preview(result, generation, config),
                                   on_error=lambda error: self._on_preview(preview.Preview(plan_error=error),
                                                                           generation, config))

    def _on_preview(self, result: preview.Preview, generation: int, config: LaunchConfig) -> None:
        self._plan_task = None
        if generation != self.session.generation or self.info is None:
            # the model changed while this was computed: plan the new one instead
            self._replan_again = False
            if self.info is not None:
                self._start_preview()
            return
        self.preview = result
        self.session.set_plan(result.plan, config)
        self.session.set_backend(result.backend)
        self._render_preview()
        self.planned.emit(result.plan)
        if self._replan_again:
            self._replan_again = False
            self._start_preview()

    def _render_preview(self) -> None:
        result = self.preview
        self.plan_bars.set_plan(result.plan if result else None)
        self.plan_text.setText(preview.plan_text(result))
        self.use_plan.setVisible(preview.recommendation_differs(result, self.config()))
        self.command.setText(result.command if result else "")
        self.command.setToolTip(self.command.text())
        self.command.setCursorPosition(0)
        self.command_notes.setText(preview.command_notes_text(result))
        self.command_notes.setVisible(bool(self.command_notes.text()))

    def _copy_command(self) -> None:
        QGuiApplication.clipboard().setText(self.command.text())

    def wait_idle(self) -> bool:
        """For tests: True when no plan is being computed or waiting to be."""
        return self._plan_task is None and not self._debouncer.pending


def _experts_layers(info: ModelInfo | None) -> int | None:
    """The layer count of a model with experts (what the experts row goes up to); None for a dense model."""
    from app.core.plan.experts import expert_split  # with the first model, not before the window's first paint

    return int(info.block_count or 0) if info is not None and expert_split(info).is_moe else None
