"""The crash card: the diagnosis sentence, what the exit means, the next step, the evidence lines,
and "Apply fix and restart" when the diagnosis carries a fix the settings can take.

A fix that is no setting, ``Fix.REBUILD_ENGINE`` (the engine was built for instructions this processor
cannot run), becomes "Rebuild the engine and restart": the card asks for the rebuild (``rebuildRequested``) and
shows its progress, Cancel and outcome. Where this installation cannot rebuild, the button offers the other
engine instead (an ordinary settings fix)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.core.launch.config import ConfigChanges
from app.core.problem import Fix
from app.core.text import Text
from app.ui.steps.machine.engine_rebuild import cannot_rebuild_reason, other_engine
from app.ui.steps.machine.rebuild_box import RebuildBox
from app.ui.widgets.problem_view import ProblemView, render

if TYPE_CHECKING:  # Diagnosis: the crash decoder's package loads with the first crash, not with the window
    from app.core.diagnosis.value import Diagnosis
    from app.core.launch.config import LaunchConfig
    from app.ui.steps.machine.engine_rebuild import EngineRebuild


APPLYING, APPLIED = "applying", "applied"
CRASH_STYLE = "#crashCard { border: 1px solid #c62828; border-radius: 6px; background: #fdecea; }"
APPLIED_STYLE = "#crashCard { border: 1px solid #2e7d32; border-radius: 6px; background: #edf7ed; }"
CRASH_TITLE_STYLE, APPLIED_TITLE_STYLE = "font-weight: bold; color: #8e0000;", "font-weight: bold; color: #1b5e20;"


class CrashCard(QFrame):
    """The diagnosis of a crash, compact so the chat below keeps its room: the title, the sentence, the fix button
    and Dismiss (with "Show details" beside them), and the next step when there is no fix button to take it. The
    details, shut until asked for: what the exit means, the next step and what the fix changes, the evidence."""

    applyFixRequested = Signal(object)  # the fix's ConfigChanges (core's one rule: {"port": 0} = any free port)
    rebuildRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.diagnosis: Diagnosis | None = None
        self._config: LaunchConfig | None = None  # the config that crashed (for "old → new")
        self._context = ""
        self._fix_enabled = True
        self._cannot_rebuild: Text | None = None  # why the engine cannot be rebuilt here, for this diagnosis
        self._applied = ""  # this diagnosis' fix: "" not applied, APPLYING (restarting with it), APPLIED (running)
        self.setObjectName("crashCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(CRASH_STYLE)
        self.title = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.title.setStyleSheet(CRASH_TITLE_STYLE)
        self.problem = ProblemView(self, folded=True)  # sentence, next step; exit meaning and evidence folded
        self.fix_changes = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.fix_changes.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.rebuild_box = RebuildBox(self)  # a rebuild's progress: shown while it runs, never folded away
        self.problem.add_before_evidence(self.fix_changes)
        self.apply_button = QPushButton(self)
        self.apply_button.clicked.connect(self._apply)
        self.dismiss_button = QPushButton(self)
        self.dismiss_button.clicked.connect(self.hide)
        actions = QHBoxLayout()
        actions.addWidget(self.apply_button)
        actions.addWidget(self.dismiss_button)
        actions.addStretch(1)
        actions.addWidget(self.problem.details_toggle)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(4)
        for widget in (self.title, self.problem, self.rebuild_box):
            layout.addWidget(widget)
        layout.addLayout(actions)
        layout.addWidget(self.problem.details)

    def set_diagnosis(self, diagnosis: Diagnosis | None, config: LaunchConfig | None = None) -> None:
        if diagnosis is not self.diagnosis:
            self.rebuild_box.clear()
            self._applied = ""
        self.diagnosis, self._config = diagnosis, config
        self._cannot_rebuild = cannot_rebuild_reason() if self._rebuild_engine() is not None else None
        self.retranslate()

    def follow_rebuild(self, rebuild: EngineRebuild) -> None:
        """Show the window's engine rebuild (``EngineRebuild``) while this card offers it."""
        self.rebuild_box.follow(rebuild)
        for signal in (rebuild.started, rebuild.finished, rebuild.failed):
            signal.connect(self._render_button)

    def set_context(self, context: str) -> None:
        """Pick the title: "" (just crashed), "recovered", "crash_loop", "not_restartable" or "failed"."""
        self._context = context
        self._render_title()

    def set_fix_enabled(self, enabled: bool) -> None:
        self._fix_enabled = enabled
        self._render_button()

    @property
    def applied(self) -> str:
        """"" (the fix was not applied), APPLYING (the server restarts with it) or APPLIED (it runs with it)."""
        return self._applied

    def mark_running(self) -> None:
        """The server is Ready again: a fix being applied is now applied (the card says so, its button is off)."""
        if self._applied == APPLYING:
            self._applied = APPLIED
            self.retranslate()

    def has_fix(self) -> bool:
        return self.diagnosis is not None and self.diagnosis.action is not None

    def _rebuild_engine(self) -> str | None:
        """The engine a rebuild fix names; None for a settings fix or none."""
        action = self.diagnosis.action if self.diagnosis is not None else None
        return str(action.get("engine")) if action is not None and action.kind is Fix.REBUILD_ENGINE else None

    def action(self) -> tuple[str, dict]:
        """What the fix button does: ("rebuild", {}), or ("apply", settings changes) — for a rebuild fix that
        cannot run here, the other engine."""
        engine = self._rebuild_engine()
        if engine is None:
            action = self.diagnosis.action if self.diagnosis is not None else None
            return "apply", action.changes if action is not None else {}
        if self._cannot_rebuild is None:
            return "rebuild", {}
        return "apply", {"backend": other_engine(engine)}

    @property
    def rebuilding(self) -> bool:
        return self.rebuild_box.active

    def retranslate(self) -> None:
        diagnosis = self.diagnosis
        self._render_title()
        title = self.tr("Evidence behind this diagnosis ({count})")
        self.problem.set_problem(
            diagnosis, generic=self.tr("The server stopped unexpectedly and gave no reason we recognise."),
            detail=render(diagnosis.exit_meaning) if diagnosis is not None else "",
            evidence_title=lambda count: title.format(count=count))
        self._set_optional(self.fix_changes, "" if self._applied else self._describe_fix())
        self.problem.fold_next_step(self.has_fix())  # the fix button is the next step; its words wait in details
        kind, _changes = self.action()
        if kind == "rebuild":
            self.apply_button.setText(self.tr("Rebuild the engine and restart"))
        elif self._rebuild_engine() is not None:
            self.apply_button.setText(self.tr("Use the other engine and restart"))
        else:
            self.apply_button.setText(self.tr("Apply fix and restart"))
        self.apply_button.setVisible(self.has_fix())
        self.rebuild_box.set_relevant(kind == "rebuild")
        self.dismiss_button.setText(self.tr("Dismiss"))
        self.problem.render_details_toggle()
        self._render_button()

    def _render_button(self, *_: object) -> None:
        self.apply_button.setEnabled(self._fix_enabled and self.has_fix() and not self.rebuilding
                                     and not self._applied)
        self.dismiss_button.setEnabled(not self.rebuilding)

    def _render_title(self) -> None:
        solved = self._applied == APPLIED
        if solved != (self.styleSheet() == APPLIED_STYLE):  # green once the server runs with the fix
            self.setStyleSheet(APPLIED_STYLE if solved else CRASH_STYLE)
            self.title.setStyleSheet(APPLIED_TITLE_STYLE if solved else CRASH_TITLE_STYLE)
        if self._applied:
            self.title.setText(self._applied_title())
            return
        titles = {
            "crash_loop": self.tr("The server keeps crashing, so automatic restarts were stopped."),
            "not_restartable": self.tr("The server stopped, and restarting it with the same settings would not help."),
            "failed": self.tr("The server could not be started or kept running."),
            "recovered": self.tr("The server stopped unexpectedly and was restarted automatically."),
            "planned": self.tr("The server was restarted on purpose before the computer ran out of memory."),
            "offload": self.tr("The server runs, but not on the graphics card as planned."),
        }
        self.title.setText(titles.get(self._context, self.tr("The server stopped unexpectedly.")))

    @staticmethod
    def _set_optional(label: QLabel, text: str) -> None:
        label.setText(text)
        label.setVisible(bool(text))

    def _field_name(self, key: str) -> str:
        names = {
            "ctx": self.tr("Context size"),
            "gpu_layers": self.tr("GPU layers"),
            "parallel": self.tr("Parallel slots"),
            "batch": self.tr("Batch size"),
            "ubatch": self.tr("Micro-batch size"),
            "port": self.tr("Port"),
            "load_mode": self.tr("Load mode"),
            "flash_attn": self.tr("Flash attention"),
            "cache_type_k": self.tr("K cache type"),
            "cache_type_v": self.tr("V cache type"),
            "threads": self.tr("Threads"),
            "backend": self.tr("Backend"),
            "extra_args": self.tr("Extra arguments"),
            "host": self.tr("Host"),
            "rpc_workers": self.tr("Workers"),
        }
        return names.get(key, key)

    def _applied_title(self) -> str:
        changes = "; ".join(self._changes())
        if self._applied == APPLYING:
            if changes:
                return self.tr("Applying the fix ({changes}); the server is restarting.").format(changes=changes)
            return self.tr("Applying the fix; the server is restarting.")
        if changes:
            return self.tr("Applied: {changes}; the server is running again.").format(changes=changes)
        return self.tr("Applied; the server is running again.")

    def _describe_fix(self) -> str:
        changes = self._changes()
        text = self.tr("The fix changes: {changes}").format(changes=", ".join(changes)) if changes else ""
        if self._cannot_rebuild is not None and text:
            text = render(self._cannot_rebuild) + " " + text
        return text

    def _changes(self) -> list[str]:
        """The fix's changes, each as "Context size: 4096 → 2048" (none for a rebuild: the settings stay)."""
        kind, fix = self.action()
        if kind == "rebuild":
            return []  # the next step above says it; the settings do not change
        changes = []
        current = self._config.to_dict() if self._config is not None else {}
        for key, new in fix.items():
            if key == "port" and new == 0:
                new = self.tr("any free port")
            old = current.get(key)
            if key == "rpc_workers":  # addresses, not a Python list; none left: this computer alone
                old, new = (", ".join(v) or self.tr("none") if v is not None else None for v in (old, new))
            arrow = f"{old} → {new}" if old is not None else str(new)
            changes.append(f"{self._field_name(key)}: {arrow}")
        return changes

    def _apply(self) -> None:
        kind, changes = self.action()
        if kind == "rebuild":
            self.rebuildRequested.emit()
        elif self.has_fix():  # a fix with no settings to change (restart as it is) restarts all the same
            self._applied = APPLYING
            self.retranslate()
            self.applyFixRequested.emit(ConfigChanges(changes))
