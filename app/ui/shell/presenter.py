"""Presenter mode (View → Presenter mode, F11): the demo must not die on stage, and if it does, one button brings
it back.

Entering it: the settings are locked (the Machine, Model and Settings steps take no clicks or drops), the steps
column gives its room to the server and a large chat, the screen is kept awake, and the pre-flight checklist runs
(core ``preflight``; its test question is a real request, so it runs on a worker). **Recover** (F8, and a button in
the Server step) restarts the server with the last settings that reached Ready and asks the interrupted question
again; the status bar says how long it took.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPushButton, QVBoxLayout, QWidget

from app.core.launch.config import BACKEND_LLAMA_SERVER
from app.core.server.events import State
from app.ui.i18n import Retranslating
from app.ui.widgets.check_list import CheckList
from app.ui.workers import run_task

if TYPE_CHECKING:
    from app.core.presenter.awake import ScreenAwake
    from app.core.presenter.preflight import PreflightInputs
    from app.core.problem import Check
    from app.core.session import ModelSession
    from app.ui.chat.chat_embed import ChatTab
    from app.ui.steps.server.supervisor_bridge import SupervisorBridge

logger = logging.getLogger(__name__)

CHAT_FONT_SCALE = 1.6


def _gather_and_check(inputs: PreflightInputs, url: str | None, api_key: str | None, backend: str,
                      pid: int | None):  # worker thread
    """The inputs that need I/O (a real test question, memory, battery, the port), then the rows."""
    from dataclasses import replace

    from app.core.chat.client import ChatClient
    from app.core.launch.ports import is_port_free
    from app.core.presenter.preflight import ask_test_question, battery_state, preflight_checks
    from app.core.server.watchdog import read_server_memory

    seconds, problem = (None, None)
    if url and inputs.server_state is State.READY:
        client = ChatClient(url, api_key=api_key, backend=backend)
        try:
            seconds, problem = ask_test_question(client)
        finally:
            client.close()  # its pooled connection to the server, left open, was an unclosed socket
    port_free = None
    if inputs.server_state is not State.READY and inputs.settings is not None:
        port_free = is_port_free(inputs.settings.host, inputs.settings.port)
    inputs = replace(inputs, answer_seconds=seconds, answer_error=problem, port_free=port_free,
                     memory_fraction=read_server_memory(pid).fraction, battery=battery_state())
    return preflight_checks(inputs)


class PreflightDialog(Retranslating, QDialog):
    """"Before the talk": the checklist's rows and a button to run it again."""

    runRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.intro = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.rows = CheckList(self, fold_passed=False)
        self.run_button = QPushButton(self)
        self.run_button.clicked.connect(self.runRequested.emit)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.close)
        buttons.addButton(self.run_button, QDialogButtonBox.ButtonRole.ActionRole)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(self.rows)
        layout.addStretch(1)  # the spare height goes below the rows: stretched rows centred each sentence in a
        # taller cell while its icon stayed at the top (about 8 px above the text)
        layout.addWidget(buttons)
        self.resize(560, 420)
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Before the talk"))
        self.intro.setText(self.tr("Everything a demo needs, checked on this computer now."))
        self.run_button.setText(self.tr("Check again"))
        self.rows.set_checks(self.rows.checks)  # core sentences in the language just chosen

    def set_running(self, running: bool) -> None:
        self.run_button.setEnabled(not running)
        if running:
            self.intro.setText(self.tr("Checking… (a test question is asked to the server)"))
        else:
            self.intro.setText(self.tr("Everything a demo needs, checked on this computer now."))


@dataclass(frozen=True)
class PresenterParts:
    """All that presenter mode touches of the window (built once by the window)."""

    settings_steps: tuple[QWidget, ...]  # locked while it is on (Machine, Model, Settings)
    steps_column: QWidget  # hidden while it is on: its room goes to the server and the chat
    chat: ChatTab  # its reply and message box are enlarged; Recover asks the last question again
    session: ModelSession  # the model, its config and probe: the checklist's inputs
    bridge: SupervisorBridge  # the server: its state for the checklist, Recover's restart


class PresenterMode(QObject):
    """``changed(bool)``: presenter mode went on or off; ``message(str)``: a sentence for the status bar.

    ``parent``: the window, also the checklist dialog's parent; everything else it touches is in ``parts``."""

    changed = Signal(bool)
    message = Signal(str)

    def __init__(self, parts: PresenterParts, parent: QWidget) -> None:
        super().__init__(parent)
        self.parts = parts
        self._dialog_parent = parent
        self.active = False
        self.dialog: PreflightDialog | None = None
        self.checks: list[Check] = []
        self._fonts: dict[QWidget, QFont] = {}
        self._recover_started: float | None = None
        self._awake: ScreenAwake | None = None

    # --- on and off ----------------------------------------------------------------------------------

    def set_active(self, active: bool) -> None:
        if active == self.active:
            return
        self.active = active
        for step in self.parts.settings_steps:
            step.setEnabled(not active)  # a locked profile: no stray click or drop changes a setting
        self.parts.steps_column.setVisible(not active)
        self._scale_chat(CHAT_FONT_SCALE if active else None)
        self._keep_awake(active)
        self.changed.emit(active)
        if active:
            self.show_checklist()
        elif self.dialog is not None:
            self.dialog.close()

    def _scale_chat(self, scale: float | None) -> None:
        pane = self.parts.chat.pane
        if pane is None:
            return  # still loading: nothing to enlarge yet
        widget: QWidget
        for widget in (pane.transcript, pane.input):
            if scale is None:
                if widget in self._fonts:
                    widget.setFont(self._fonts.pop(widget))
                continue
            font = widget.font()
            self._fonts[widget] = font
            bigger = QFont(font)
            bigger.setPointSizeF(font.pointSizeF() * scale)
            widget.setFont(bigger)

    def _keep_awake(self, active: bool) -> None:
        from app.core.presenter.awake import ScreenAwake

        if active:
            self._awake = self._awake or ScreenAwake()
            self._awake.start()
        elif self._awake is not None:
            self._awake.stop()

    @property
    def awake(self) -> bool:
        return self._awake is not None and self._awake.active

    # --- the checklist -------------------------------------------------------------------------------

    def show_checklist(self) -> None:
        if self.dialog is None:
            self.dialog = PreflightDialog(self._dialog_parent)
            self.dialog.runRequested.connect(self.run_checklist)
        self.dialog.show()
        self.dialog.raise_()
        self.run_checklist()

    def _inputs(self) -> PreflightInputs:
        from app.core.launch.engine_choice import cached_check
        from app.core.presenter.preflight import PreflightInputs

        session = self.parts.session
        config = session.config
        probe = session.probe or session.saved_probe
        engine = cached_check(config.backend, config.server_bin) if config is not None else None
        supervisor = self.parts.bridge.supervisor
        state = supervisor.state if supervisor is not None else State.STOPPED
        return PreflightInputs(
            model_usable=session.usable, settings=config,
            recommendation=probe.recommendation if probe is not None else None,
            engine_ok=engine.ok if engine is not None else None, server_state=state, awake=self.awake,
            awake_reason=self._awake.unavailable_reason if self._awake is not None else None)

    def run_checklist(self) -> None:
        if self.dialog is None:
            return
        inputs = self._inputs()
        supervisor = self.parts.bridge.supervisor
        url = supervisor.url if supervisor is not None else None
        config = supervisor.config if supervisor is not None else inputs.settings
        api_key = config.api_key if config is not None else None
        backend = config.backend if config is not None else BACKEND_LLAMA_SERVER
        self.dialog.set_running(True)
        run_task(_gather_and_check, inputs, url, api_key, backend, supervisor.pid if supervisor is not None else None,
                 on_done=self._checked, on_error=self._check_failed, owner=self)

    def _checked(self, checks: list[Check]) -> None:
        self.checks = list(checks)
        if self.dialog is not None:
            self.dialog.set_running(False)
            self.dialog.rows.set_checks(self.checks)

    def _check_failed(self, error: BaseException) -> None:
        logger.error("pre-flight checklist failed", exc_info=error)
        if self.dialog is not None:
            self.dialog.set_running(False)
        self.message.emit(self.tr("The checklist could not run; the app's log file says why."))

    # --- Recover -------------------------------------------------------------------------------------

    def recover(self) -> None:
        """The server back with the last settings that reached Ready; the interrupted question asked again."""
        bridge = self.parts.bridge
        if bridge.supervisor is None:
            return
        self._recover_started = time.monotonic()
        self.message.emit(self.tr("Recovering: restarting the server with the last settings that worked…"))
        bridge.recover()

    def on_server_state(self, state: State) -> None:
        """After Recover's restart: ask the waiting question again, and say how long it took."""
        if self._recover_started is None or state is not State.READY:
            return
        started, self._recover_started = self._recover_started, None
        pane = self.parts.chat.pane
        asked = pane is not None and pane.resend()
        seconds = f"{time.monotonic() - started:.1f}"
        if asked:
            self.message.emit(self.tr("Recovered in {s} s; the last question is asked again.").format(s=seconds))
        else:
            self.message.emit(self.tr("Recovered in {s} s.").format(s=seconds))
