"""Server panel: state badge, Start / Stop / Restart, uptime, restarts, URL, and the crash card.

The panel renders what the supervisor reports and asks for actions; it decides nothing itself.
One way to wire it, for the window and the tests alike: ``ServerPanel(bridge)`` follows the ``SupervisorBridge``'s
state, its buttons only emit ``startRequested`` / ``stopRequested`` / ``restartRequested`` /
``applyFixRequested(dict)`` / ``rebuildRequested``, and ``ServerControl.attach(panel)`` runs them (Start and
Restart with the model session's config; "Rebuild the engine and restart" with the window's one rebuild job, which
the panel follows: Start and Restart wait while it runs). Without a bridge (``ServerPanel()``) it only renders.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal, SignalInstance, Slot
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.problem import Problem
from app.core.server.events import ACTIVE_STATES, IDLE_STATES, State, StateChanged
from app.core.server.memory_values import Level, MemoryReading, VramGrab
from app.core.server.policy import CRASH_LOOP, NOT_RESTARTABLE
from app.ui.i18n import Retranslating
from app.ui.steps.server.crash_card import CrashCard
from app.ui.steps.server.local_access import LocalAccessBox
from app.ui.steps.server.share_box import ShareBox
from app.ui.widgets.problem_view import problem_text

if TYPE_CHECKING:
    from app.core.diagnosis.value import Diagnosis
    from app.core.server.supervisor import Supervisor
    from app.ui.steps.machine.engine_rebuild import EngineRebuild
    from app.ui.steps.server.supervisor_bridge import SupervisorBridge


def _level_sentence(level: Level, reading: MemoryReading) -> str:
    """The watchdog's sentence for a reading (the watchdog, with its memory readers, loads with the first one)."""
    from app.core.server.watchdog import level_sentence

    return level_sentence(level, reading).render()


STATE_COLOURS = {
    State.STOPPED: "#757575",
    State.STARTING: "#1565c0",
    State.LOADING: "#1565c0",
    State.READY: "#2e7d32",
    State.STOPPING: "#757575",
    State.CRASHED: "#c62828",
    State.RESTARTING: "#ef6c00",
    State.FAILED: "#8e0000",
}
START_STATES = IDLE_STATES  # "crashed" is brief: an automatic restart or "failed" follows
STOP_STATES = ACTIVE_STATES
RESTART_STATES = (ACTIVE_STATES - {State.RESTARTING}) | {State.FAILED}


def format_uptime(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class ServerPanel(Retranslating, QWidget):
    startRequested = Signal()
    stopRequested = Signal()
    restartRequested = Signal()
    recoverRequested = Signal()  # presenter mode's Recover (the owner runs it)
    applyFixRequested = Signal(dict)
    rebuildRequested = Signal()
    message = Signal(str)  # one sentence for the status bar (the address was copied instead of opened)

    def __init__(self, bridge: SupervisorBridge | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bridge: SupervisorBridge | None = None
        self.state = State.STOPPED
        self.restart_count = 0
        self.url = ""
        self._ready_since: float | None = None
        self._pending_action = ""
        self._rebuilding = False
        self._model_ready = True  # the window says when no model has passed its checks (set_model_ready)
        self._uptime_timer = QTimer(self, interval=1000)
        self._uptime_timer.timeout.connect(self._update_uptime)
        self._build()
        self.retranslate()
        if bridge is not None:
            self._follow(bridge)

    def _build(self) -> None:
        self.badge = QLabel(self, alignment=Qt.AlignmentFlag.AlignCenter, textFormat=Qt.TextFormat.PlainText)
        self.badge.setMinimumWidth(110)
        self.start_button = QPushButton(self)
        self.start_button.clicked.connect(self._on_start)
        self.stop_button = QPushButton(self)
        self.stop_button.clicked.connect(self._on_stop)
        self.restart_button = QPushButton(self)
        self.restart_button.clicked.connect(self._on_restart)
        self.recover_button = QPushButton(self)  # shown in presenter mode
        self.recover_button.clicked.connect(self.recoverRequested.emit)
        self.recover_button.hide()
        self.uptime_caption = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.uptime_value = QLabel("—", self, textFormat=Qt.TextFormat.PlainText)
        self.restarts_caption = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.restarts_value = QLabel("0", self, textFormat=Qt.TextFormat.PlainText)
        self.url_caption = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.url_value = QLabel("—", self)  # rich text on purpose: the address is a link
        self.url_value.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.url_value.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # Tab passes by; Shift+Tab no longer sticks on it
        self.url_value.setOpenExternalLinks(False)  # opened by _open_address: without a browser it is copied
        self.url_value.linkActivated.connect(self._open_address)
        self.error_label = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.error_label.setStyleSheet("color: #c62828;")
        self.error_label.hide()
        self.memory_label = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText)  # the watchdog's warning
        self.memory_label.setStyleSheet("color: #8a5a00;")
        self.memory_label.hide()
        self._memory: tuple[Level, MemoryReading] | None = None
        self._vram_grab: VramGrab | None = None  # another program took GPU memory while the server runs
        self.crash_card = CrashCard(self)
        self.crash_card.applyFixRequested.connect(self._on_apply_fix)
        self.crash_card.rebuildRequested.connect(self._on_rebuild)
        self.crash_card.hide()
        self.share_box = ShareBox(self)  # other devices on the network (off, and loopback, unless chosen)
        self.local_access = LocalAccessBox(self)  # other programs on this computer: address and key, while ready

        buttons = QHBoxLayout()
        buttons.addWidget(self.badge)
        for button in (self.start_button, self.stop_button, self.restart_button, self.recover_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        facts = QGridLayout()
        for row, (caption, value) in enumerate(
            ((self.uptime_caption, self.uptime_value), (self.restarts_caption, self.restarts_value),
             (self.url_caption, self.url_value))
        ):
            facts.addWidget(caption, row, 0)
            facts.addWidget(value, row, 1)
        facts.setColumnStretch(1, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(self.crash_card)  # right under Start: seen first when the Server step has little room
        layout.addWidget(self.error_label)
        layout.addWidget(self.memory_label)
        layout.addLayout(facts)
        layout.addWidget(self.local_access)
        layout.addWidget(self.share_box)
        layout.addStretch(1)

    def state_label(self, state: State) -> str:
        names = {
            State.STOPPED: self.tr("Stopped"),
            State.STARTING: self.tr("Starting"),
            State.LOADING: self.tr("Loading model"),
            State.READY: self.tr("Ready"),
            State.STOPPING: self.tr("Stopping"),
            State.CRASHED: self.tr("Crashed"),
            State.RESTARTING: self.tr("Restarting"),
            State.FAILED: self.tr("Failed"),
        }
        return names[state]

    def retranslate(self) -> None:
        self.start_button.setText(self.tr("Start"))
        self.stop_button.setText(self.tr("Stop"))
        self.restart_button.setText(self.tr("Restart"))
        self.recover_button.setText(self.tr("Recover"))
        self.recover_button.setToolTip(self.tr("Restart with the last settings that worked and ask the last question "
                                               "again"))
        self.uptime_caption.setText(self.tr("Uptime:"))
        self.restarts_caption.setText(self.tr("Restarts:"))
        self.url_caption.setText(self.tr("Address:"))
        self.crash_card.retranslate()
        self._render_memory()
        self._render_state()


    def _open_address(self, url: str) -> None:
        """Open the server's address in the browser; where none opens, copy it and say so."""
        from PySide6.QtCore import QUrl
        from PySide6.QtGui import QDesktopServices, QGuiApplication

        if not QDesktopServices.openUrl(QUrl(url)):
            QGuiApplication.clipboard().setText(url)
            self.message.emit(self.tr("No web browser opened, so the address {url} was copied: paste it into one.")
                              .format(url=url))

    def set_model_ready(self, ready: bool) -> None:
        """Whether a model passed its checks: until one has, Start is disabled and its tooltip says why."""
        self._model_ready = bool(ready)
        self._render_state()

    # --- bridge --------------------------------------------------------------------------------

    def _follow(self, bridge: SupervisorBridge) -> None:
        self.bridge = bridge
        bridge.stateChanged.connect(self.set_state)
        bridge.crashed.connect(self.show_diagnosis)
        bridge.restarting.connect(self._on_restarting)
        bridge.memoryChanged.connect(self.set_memory)
        bridge.vramTaken.connect(self.set_vram_grab)
        bridge.actionFinished.connect(self._on_action_finished)
        bridge.actionFailed.connect(self._on_action_failed)
        bridge.supervisorChanged.connect(self._on_supervisor_changed)
        self._on_supervisor_changed(bridge.supervisor)
        self.share_box.set_bridge(bridge)

    def follow_rebuild(self, rebuild: EngineRebuild) -> None:
        """Follow the window's engine rebuild (``EngineRebuild``): the crash card shows it, Start waits for it."""
        self.crash_card.follow_rebuild(rebuild)
        rebuild.started.connect(lambda: self._set_rebuilding(True))
        rebuild.finished.connect(lambda _check: self._set_rebuilding(False))
        rebuild.failed.connect(lambda _error: self._set_rebuilding(False))
        self._set_rebuilding(rebuild.running)

    def _set_rebuilding(self, rebuilding: bool) -> None:
        self._rebuilding = rebuilding
        self._render_state()

    @Slot(object)
    def _on_supervisor_changed(self, supervisor: Supervisor | None) -> None:
        """Another model's supervisor (or none): show its state from scratch."""
        self.clear_diagnosis()
        self.error_label.hide()
        self._memory = self._vram_grab = None
        self._render_memory()
        self.restart_count = 0
        self.set_state(supervisor.state if supervisor is not None else State.STOPPED)

    @property
    def _supervisor(self) -> Supervisor | None:
        return self.bridge.supervisor if self.bridge is not None else None

    # --- rendering -----------------------------------------------------------------------------

    @Slot(object, object)
    def set_state(self, state: State, change: StateChanged | None = None) -> None:
        """Render ``state``; ``change``: the supervisor's StateChanged (None: only the state is known)."""
        previous, self.state = self.state, State(state)
        state = self.state
        if state is not State.READY and (self._memory or self._vram_grab):  # about the server that ran
            self._memory = self._vram_grab = None
            self._render_memory()
        self._pending_action = ""  # the owner runs the actions; the next state is our only answer
        if state is State.READY and (previous is not State.READY or self._ready_since is None):
            self._ready_since = time.monotonic()
            self._uptime_timer.start()
        elif state is not State.READY:
            self._ready_since = None
            self._uptime_timer.stop()
        supervisor = self._supervisor
        known_restarts = supervisor.restart_count if supervisor is not None else self.restart_count
        self.restart_count = change.restart_count if change is not None else known_restarts
        self.url = (change.url if change is not None else None) or (supervisor.url if supervisor else "")
        diagnosis = change.diagnosis if change is not None else None
        new_diagnosis = diagnosis is not None and diagnosis is not self.crash_card.diagnosis
        if state in (State.CRASHED, State.FAILED) and new_diagnosis:
            self.show_diagnosis(diagnosis)
        self._set_card_context(state, change.reason if change is not None else None)
        if state is State.READY:
            self.crash_card.mark_running()  # a fix being applied now runs: the card says so, its button is off
        if state is State.READY and supervisor is not None and self.url:
            self.local_access.show_server(self.url, supervisor.api_key)
        else:
            self.local_access.clear()
        self._render_state()

    @Slot(object, object)
    def set_memory(self, level: Level, reading: MemoryReading) -> None:
        """The watchdog's level: its sentence stays shown while memory is short (WARNING), goes with NORMAL."""
        self._memory = (level, reading) if level is Level.WARNING else None
        self._render_memory()

    @Slot(object)
    def set_vram_grab(self, grab: VramGrab) -> None:
        self._vram_grab = grab
        self._render_memory()

    def _render_memory(self) -> None:
        parts = [_level_sentence(*self._memory) if self._memory is not None else "",
                 self._vram_grab.sentence().render() if self._vram_grab is not None else ""]
        text = "\n".join(part for part in parts if part)
        self.memory_label.setText(text)
        self.memory_label.setVisible(bool(text))

    def _set_card_context(self, state: State, reason: str | None = None) -> None:
        cause = self.crash_card.diagnosis.cause if self.crash_card.diagnosis is not None else None
        if cause == "gpu_offload_short" and state in (State.LOADING, State.READY):
            self.crash_card.set_context("offload")  # it runs, but not on the graphics card as planned
        elif state is State.READY and cause == "memory_watchdog":
            self.crash_card.set_context("planned")
        elif state is State.FAILED:
            self.crash_card.set_context(reason if reason in (CRASH_LOOP, NOT_RESTARTABLE) else "failed")
        elif state is State.READY:
            self.crash_card.set_context("recovered")
        elif state in (State.CRASHED, State.RESTARTING):
            self.crash_card.set_context("")

    def _render_state(self) -> None:
        colour = STATE_COLOURS[self.state]
        self.badge.setText(self.state_label(self.state))
        sheet = f"background: {colour}; color: white; border-radius: 4px; padding: 3px 8px; font-weight: bold;"
        if self.badge.styleSheet() != sheet:  # each new sheet re-polishes the badge: set it only when it changes
            self.badge.setStyleSheet(sheet)
        busy = bool(self._pending_action) or self._rebuilding  # no start while the engine is being replaced
        self.start_button.setEnabled(self.state in START_STATES and not busy and self._model_ready)
        self.start_button.setToolTip("" if self._model_ready else self.tr("Open a model that passes its checks first."))
        self.stop_button.setEnabled(self.state in STOP_STATES and self._pending_action != "stop")
        self.restart_button.setEnabled(self.state in RESTART_STATES and not busy)
        self.crash_card.set_fix_enabled(not busy)
        self.restarts_value.setText(str(self.restart_count))
        shown = self.url and self.state is State.READY
        if shown:
            import html  # with its table of entities: loaded with the first address shown, not at start-up

            link = html.escape(self.url or "")
            self.url_value.setText(f'<a href="{link}">{link}</a>')
        else:
            self.url_value.setText("—")
        self._update_uptime()

    @Slot()
    def _update_uptime(self) -> None:
        if self._ready_since is None:
            self.uptime_value.setText("—")
        else:
            self.uptime_value.setText(format_uptime(time.monotonic() - self._ready_since))

    @Slot(object)
    def show_diagnosis(self, diagnosis: Diagnosis | None) -> None:
        """Show the crash card for a core ``Diagnosis`` (``None`` shows a generic sentence)."""
        supervisor = self._supervisor
        self.crash_card.set_diagnosis(diagnosis, supervisor.config if supervisor is not None else None)
        if diagnosis is not None and diagnosis.cause == "gpu_offload_short":  # said while the server runs on
            self._set_card_context(self.state)
        self.crash_card.show()

    def clear_diagnosis(self) -> None:
        self.crash_card.set_diagnosis(None, None)
        self.crash_card.hide()

    @Slot(int)
    def _on_restarting(self, attempt: int) -> None:
        self.restart_count = max(self.restart_count, attempt)
        self._render_state()

    @Slot(str)
    def _on_action_finished(self, _name: str) -> None:
        self._pending_action = ""
        self._render_state()

    @Slot(str, object)
    def _on_action_failed(self, _name: str, error: object) -> None:
        if self.state is State.FAILED and self.crash_card.isVisibleTo(self):
            return  # the crash card already explains it (the supervisor's diagnosis of the failed start)
        if isinstance(error, Problem):  # a UserError: its sentence and next step
            text = problem_text(error, labelled=False)
        else:
            text = self.tr("The action failed: {error}").format(error=error)
        self.error_label.setText(text)
        self.error_label.show()

    # --- actions -------------------------------------------------------------------------------

    def _request(self, name: str, signal: SignalInstance, *args: Any) -> None:
        """Ask the owner (``ServerControl``) for an action; the buttons wait for the bridge's answer."""
        self.error_label.hide()
        self._pending_action = name if self.bridge is not None else ""  # without a bridge nobody reports back
        self._render_state()
        signal.emit(*args)

    def _on_start(self) -> None:
        self.clear_diagnosis()
        self._request("start", self.startRequested)

    def _on_stop(self) -> None:
        self._request("stop", self.stopRequested)

    def _on_restart(self) -> None:
        self._request("restart", self.restartRequested)

    def _on_rebuild(self) -> None:
        self.error_label.hide()
        self.rebuildRequested.emit()

    def _on_apply_fix(self, fix: dict) -> None:
        self._request("apply_fix", self.applyFixRequested, dict(fix))
