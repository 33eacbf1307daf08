"""The main window: the user's path from top left to bottom right — Machine → Model → Settings on the left,
Server above Chat | Logs on the right. It wires the panels together and remembers choices; no logic of its own."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QEvent, Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QMainWindow,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.launch.config import LaunchConfig
from app.core.server.events import State, StateChanged
from app.core.session import ModelSession
from app.core.settings import Settings
from app.ui import i18n, workers
from app.ui.chat.chat_embed import ChatTab
from app.ui.i18n import Retranslating
from app.ui.logs.lazy_logs import LazyLogs
from app.ui.shell import window_size, zoom
from app.ui.shell.diagnostics_report import DiagnosticsReport
from app.ui.shell.model_switch import ModelSwitch
from app.ui.shell.presenter import PresenterMode, PresenterParts
from app.ui.shell.profile_sync import ProfileSync
from app.ui.shell.session_owner import SessionOwner
from app.ui.shell.settings_store import SettingsStore
from app.ui.shell.window_menus import WindowMenus
from app.ui.shell.zoom import Zoom
from app.ui.steps.machine.machine_panel import MachinePanel
from app.ui.steps.model.model_panel import ModelPanel
from app.ui.steps.server import server_control
from app.ui.steps.server.server_panel import ServerPanel
from app.ui.steps.server.stale_servers import StaleServersBanner
from app.ui.steps.server.supervisor_bridge import SupervisorBridge
from app.ui.steps.settings.settings_panel import SettingsPanel
from app.ui.widgets.banner import Banner
from app.ui.widgets.step_box import ColumnScroll, StepBox

if TYPE_CHECKING:
    from app.ui.chat.chat_pane import ChatPane
    from app.ui.logs.log_pane import LogPane  # built on first use

CLOSE_TIMEOUT_MS = 20_000
LEFT_SHARE = 44  # percent of the width for the steps column; the rest for server and chat
MIN_WIDTH, MIN_HEIGHT = 760, 480  # the central area's own minimum: content never makes the window grow


class MainWindow(Retranslating, QMainWindow):
    def __init__(self, settings: Settings, parent: QWidget | None = None, *, live_hardware: bool = True) -> None:
        super().__init__(parent)
        self.store = SettingsStore(settings, self)
        self.bridge = SupervisorBridge(parent=self)
        self.machine = MachinePanel(self, live=live_hardware)
        # The model on its way to a server: checks, config, plan, probe; the engine from the live settings.
        self.session = ModelSession(engine_for=settings.engine_for)
        self.model = ModelPanel(self, self.session)
        self.settings_panel = SettingsPanel(self, session=self.session)
        self.server = ServerPanel(self.bridge, self)
        self.chat_tab = ChatTab(self)  # a placeholder; the real pane arrives after the first paint
        self.control = server_control.ServerControl(self.bridge, self.settings_panel, self)
        self._close_state = "open"  # open -> stopping -> done
        self._start_pending = False  # start() waits for the first paint
        self._close_timer = QTimer(self, singleShot=True, interval=CLOSE_TIMEOUT_MS)
        self._close_timer.timeout.connect(self._finish_close)
        self.screen_fit = window_size.ScreenFit(self)  # never larger than the screen it opens on
        self.setAcceptDrops(True)
        self._build()
        self.menus = WindowMenus(self, self.model, self.lazy_logs, self.set_language)
        self.presenter = PresenterMode(PresenterParts(
            settings_steps=(self.machine, self.model, self.settings_panel), steps_column=self.left_scroll,
            chat=self.chat_tab, session=self.session, bridge=self.bridge), self)
        self.report = DiagnosticsReport(self)
        self.menus.report_action.triggered.connect(self.report.save)
        self.report.busyChanged.connect(lambda busy: self.menus.report_action.setEnabled(not busy))
        self.report.message.connect(lambda text: self.statusBar().showMessage(text, 10000))
        self.zoom = Zoom(self)
        self.menus.add_commands({
            "start": lambda: self._press(self.server.start_button),
            "stop": lambda: self._press(self.server.stop_button),
            "restart": lambda: self._press(self.server.restart_button),
            "probe": lambda: self._press(self.settings_panel.probe.run_button),
            "new_chat": lambda: self._press(self.chat_tab.pane.new_button if self.chat_tab.pane else None),
            "focus_chat": self.focus_chat_input,
            "zoom_in": lambda: self.set_zoom(zoom.next_step(self.zoom.percent, +1)),
            "zoom_out": lambda: self.set_zoom(zoom.next_step(self.zoom.percent, -1)),
            "zoom_reset": lambda: self.set_zoom(100),
            "presenter": lambda: self.presenter.set_active(not self.presenter.active),
            "checklist": self.presenter.show_checklist,
            "recover": self.presenter.recover,
        })
        # the session's owner tells the steps in its fixed order (session_owner.py): these two may come in any order
        self.owner = SessionOwner(self.session, self.model, self.settings_panel, self.control, self)
        self.profiles = ProfileSync(self.store, self.owner, self.model, self.settings_panel, self)
        self.model_switch = ModelSwitch(self, self.control, self.owner, self)
        self._connect()
        self.retranslate()
        self._restore()
        self._tab_order()
        self._render_tooltips()

    # --- layout ----------------------------------------------------------------------------------

    def _build(self) -> None:
        self.banner = Banner(self)
        self.stale_servers = StaleServersBanner(self)
        self.steps = [StepBox(1, self.machine), StepBox(2, self.model), StepBox(3, self.settings_panel)]
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(8, 8, 4, 8)
        for step in self.steps:
            left_layout.addWidget(step)
        left_layout.addStretch(1)
        self.left_scroll = ColumnScroll(left)  # never sideways: the splitter keeps it as wide as its content needs
        self.tabs = QTabWidget()
        self.tabs.addTab(self.chat_tab, "")
        self.lazy_logs = LazyLogs(self.tabs, self.bridge, self)
        self.server_step, self.talk_step = StepBox(4, self.server), StepBox(5, self.tabs)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(4, 8, 8, 8)
        self.server_scroll = ColumnScroll(self.server_step, max_share=0.35)  # card under Start; the rest scrolls
        right_layout.addWidget(self.server_scroll)
        right_layout.addWidget(self.talk_step, 1)  # the chat keeps at least half the height
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.left_scroll)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, LEFT_SHARE)  # the columns share a wider window in proportion
        self.splitter.setStretchFactor(1, 100 - LEFT_SHARE)
        self.splitter.setSizes([LEFT_SHARE * 12, (100 - LEFT_SHARE) * 12])
        central = QWidget()
        central.setMinimumSize(MIN_WIDTH, MIN_HEIGHT)  # set, not derived from the content: the window never grows
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.banner)
        layout.addWidget(self.stale_servers)
        layout.addWidget(self.splitter, 1)
        self.setCentralWidget(central)
        self.resize(self.screen_fit.first_size())  # a share of a big screen, all of a small one

    def _tab_order(self) -> None:
        """Tab walks the path first: open a model, find safe settings, start, then the chat; the rest follow."""
        chain = [self.model.open_button, self.model.demo_button, self.settings_panel.probe.run_button,
                 self.server.start_button, self.server.stop_button, self.server.restart_button]
        pane = self.chat_tab.pane
        if pane is not None:
            chain += [pane.input, pane.send_button]
        for first, second in zip(chain, chain[1:], strict=False):
            QWidget.setTabOrder(first, second)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.server_scroll.updateGeometry()  # its height cap is a share of the column's height

    def _connect(self) -> None:
        self.machine.hardwareScanned.connect(self.settings_panel.set_hardware)
        self.owner.edited.connect(self._on_config_changed)
        self.settings_panel.probe.logLines.connect(self.lazy_logs.add_lines)  # the probe's servers, in the Logs tab
        self.owner.opened.connect(lambda _path: self._render_title())
        self.server.set_model_ready(False)  # Start waits for a model that passed its checks
        self.owner.opened.connect(lambda _path: self.server.set_model_ready(False))
        self.owner.checked.connect(lambda checked: self.server.set_model_ready(checked.usable))
        self.model.local_models.foldersChanged.connect(  # "On this computer": folders the user added
            lambda folders: (self.store.settings.set("model_folders", folders), self.store.save_soon()))
        self.model.hubSourceChanged.connect(  # where "Get a model" searches (the token is never saved)
            lambda source: (self.store.settings.set("hub_source", source), self.store.save_soon()))
        self.model.hubProxyChanged.connect(  # the proxy it goes through (None: the system's); never logged
            lambda proxy: (self.store.settings.set("hub_proxy", proxy or None), self.store.save_soon(),
                           self.machine.set_hub_proxy(proxy)))  # the GPU engine's download goes through it too
        self.control.attach(self.server)  # the panel's buttons run in the control (also its rebuild's follower)
        self.chat_tab.paneReady.connect(self._on_chat_ready)
        self.bridge.stateChanged.connect(self._on_server_state)
        self.bridge.stateChanged.connect(lambda state, _data: self.presenter.on_server_state(state))
        self.server.recoverRequested.connect(self.presenter.recover)
        self.bridge.memoryChanged.connect(self._on_memory)
        self.presenter.changed.connect(self._on_presenter)
        self.presenter.message.connect(lambda text: self.statusBar().showMessage(text, 15000))
        self.control.message.connect(lambda text: self.statusBar().showMessage(text, 8000))
        self.server.message.connect(lambda text: self.statusBar().showMessage(text, 8000))
        self.model_switch.message.connect(lambda text: self.statusBar().showMessage(text, 8000))
        # the engine: the Machine step tests the one Settings chose; one rebuild job, shown in both places
        self.settings_panel.engineChanged.connect(self.machine.set_engine)
        self.machine.switchEngineRequested.connect(self._switch_engine)
        self.machine.rebuildRequested.connect(self.control.rebuild_engine)
        self.machine.follow_rebuild(self.control.engine_rebuild)
        self.machine.useServerRequested.connect(self.settings_panel.use_server)  # the GPU notice's fixes
        self.settings_panel.follow_rebuild(self.control.engine_rebuild)

    @property
    def logs(self) -> LogPane:
        """The Logs pane (built on first use)."""
        return self.lazy_logs.pane()

    # --- start-up --------------------------------------------------------------------------------

    def _restore(self) -> None:
        geometry = self.store.settings.get("window_geometry")
        if geometry:
            self.restoreGeometry(QByteArray.fromBase64(geometry.encode("ascii")))
            self.screen_fit.fit(move=True)  # saved on a bigger screen: shrunk to this one's
        splitter = self.store.settings.get("window_state")
        if splitter:
            self.splitter.restoreState(QByteArray.fromBase64(splitter.encode("ascii")))
        self.model.set_recent(self.store.settings.recent_models)
        self.model.local_models.set_folders(self.store.settings.model_folders)
        self.model.hub_source = self.store.settings.get("hub_source")
        self.model.hub_proxy = self.store.settings.get("hub_proxy")
        self.machine.set_hub_proxy(self.store.settings.get("hub_proxy"))
        self.zoom.apply(self.store.settings.zoom_percent)
        self.menus.check_language(i18n.resolve_language(self.store.settings.language))
        notice = self.store.settings.notice
        if notice is not None:
            self.banner.show_text(notice.render())

    def start_after_first_paint(self) -> None:
        """Let the window appear first; the workers started by ``start`` would compete with that paint."""
        self._start_pending = True
        self.update()

    def paintEvent(self, event) -> None:
        super().paintEvent(event)
        if self._start_pending:
            self._start_pending = False
            QTimer.singleShot(0, self.start)

    def start(self) -> None:
        """Begin the hardware scan, load the chat pane and reopen the last model (all in workers)."""
        self.machine.start()
        self.machine.set_engine(*self.settings_panel.engine())
        self.stale_servers.look_for_stale_servers()
        self.chat_tab.load(self.bridge)  # its paneReady: _on_chat_ready
        last = self.store.settings.last_model
        if last:
            self.model.open_model(last, self.store.settings.profile(last).get("expected_sha256"))

    def _on_chat_ready(self, _pane: ChatPane) -> None:
        self.tabs.setCurrentWidget(self.chat_tab)
        self._tab_order()
        self._render_tooltips()  # the real pane's New chat

    # --- keyboard and zoom ------------------------------------------------------------------------

    @staticmethod
    def _press(button: QAbstractButton | None) -> None:
        """A shortcut does what its button does, and nothing while the button is disabled or hidden."""
        if button is not None and button.isEnabled() and button.isVisibleTo(button.window()):
            button.click()

    def focus_chat_input(self) -> None:
        pane = self.chat_tab.pane
        if pane is not None:
            self.tabs.setCurrentWidget(self.chat_tab)
            pane.input.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def set_zoom(self, percent: int) -> None:
        self.zoom.apply(percent)
        self.store.settings.zoom_percent = self.zoom.percent
        self.store.save_soon()
        self.statusBar().showMessage(self.tr("Zoom {percent}%").format(percent=self.zoom.percent), 3000)

    def keyPressEvent(self, event) -> None:
        """Enter presses the focused button (a button itself only takes Space)."""
        focused = QApplication.focusWidget()
        if (event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and isinstance(focused, QAbstractButton)
                and focused.isEnabled() and focused.window() is self):
            focused.animateClick()
            event.accept()
            return
        super().keyPressEvent(event)

    def _render_tooltips(self) -> None:
        """The buttons a shortcut presses say so: their tooltip (their own sentence, if any) ends with the keys."""
        self._shortcut_of = {self.server.start_button: "start", self.server.stop_button: "stop",
                             self.server.restart_button: "restart", self.settings_panel.probe.run_button: "probe"}
        if self.chat_tab.pane is not None:
            self._shortcut_of[self.chat_tab.pane.new_button] = "new_chat"
        for button in self._shortcut_of:
            button.removeEventFilter(self)
            button.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        name = getattr(self, "_shortcut_of", {}).get(watched)
        if name is not None and event.type() == QEvent.Type.ToolTip:
            from PySide6.QtWidgets import QToolTip  # imported when used: faster start-up

            keys = self.menus.shortcut_text(name)
            own = watched.toolTip()
            QToolTip.showText(event.globalPos(), f"{own}\n({keys})" if own else keys, watched)
            return True
        return super().eventFilter(watched, event)

    # --- language --------------------------------------------------------------------------------

    def set_language(self, lang: str) -> None:
        self.store.settings.language = lang
        self.store.save_soon()
        i18n.apply_language(lang)
        self.retranslate()  # also re-renders core sentences when no translator event arrives


    def retranslate(self) -> None:
        self._render_title()
        titles = (
            (self.tr("Machine"), self.tr("What this computer offers a model: memory, graphics card, notes.")),
            (self.tr("Model"), self.tr("Pick a .gguf file; every check on it is listed here.")),
            (self.tr("Settings"),
             self.tr("How much context and how many layers on the GPU; the bars show if it fits.")),
        )
        for step, (title, hint) in zip(self.steps, titles, strict=True):
            step.set_title(title, hint)
        self.server_step.set_title(self.tr("Server"), self.tr("Starts the model so you can chat with it."))
        self.talk_step.set_title(self.tr("Chat and logs"), self.tr("Talk to the model, or read what the server says."))
        self.tabs.setTabText(0, self.tr("Chat"))
        self.tabs.setTabText(1, self.tr("Logs"))
        self.menus.retranslate()
        if self.store.settings.notice is not None and self.banner.isVisible():
            self.banner.show_text(self.store.settings.notice.render())
        for widget in (self.machine, self.model, self.settings_panel, self.server, self.lazy_logs, self.chat_tab):
            widget.retranslate()
        self.model_switch.retranslate()

    # --- drag and drop anywhere on the window ----------------------------------------------------

    def _on_memory(self, level, _reading) -> None:
        from app.core.server.memory_values import Level

        self.chat_tab.set_memory_short(level is not Level.NORMAL)

    def _on_presenter(self, active: bool) -> None:
        self.server.recover_button.setVisible(active)
        self.menus.command_actions["presenter"].setChecked(active)
        self._render_title()

    def dragEnterEvent(self, event) -> None:
        if self.presenter.active:
            return  # the profile is locked: a stray drop opens no other model
        self.model.dragEnterEvent(event)

    def dropEvent(self, event) -> None:
        self.model.dropEvent(event)

    # --- model and settings ------------------------------------------------------------------------

    def _switch_engine(self, engine: str) -> None:
        """The Machine step's "use the other engine": choose it in Settings (Advanced opens to show it)."""
        self.settings_panel.set_engine(engine)
        self.settings_panel.advanced_box.set_expanded(True)
        self.statusBar().showMessage(self.tr("The engine was changed in Settings; the next start uses it."), 8000)

    def _on_config_changed(self, _config: LaunchConfig) -> None:
        if self.control.state() is State.READY and self.control.settings_differ_from_running():
            self.statusBar().showMessage(self._keeps_settings_text(), 8000)

    def _keeps_settings_text(self) -> str:
        return self.tr("The server keeps its settings until you press Restart.")

    def _render_title(self) -> None:
        """"model.gguf — Ready — GGUF Launcher": the taskbar tells a presenter the state at a glance."""
        parts = []
        sup = self.bridge.supervisor
        state = self.control.state() if sup is not None else State.STOPPED
        if sup is not None and (state is not State.STOPPED or sup.config.model == self.model.path):
            parts.append(os.path.basename(sup.config.model))  # the server's model while it runs or is shown
            parts.append(self.server.state_label(state))
        elif self.model.path:
            parts.append(os.path.basename(self.model.path))  # stopped: the model the Model step shows
        self.setWindowTitle(" — ".join([*parts, self.tr("GGUF Launcher")]))

    def _on_server_state(self, state: State, change: StateChanged) -> None:
        self._render_title()
        sup = self.bridge.supervisor
        pid = sup.pid if sup is not None else None
        self.machine.set_own_pids({pid} if pid else set())
        if state is State.READY and sup is not None:
            self.profiles.on_server_ready(sup.config)  # the engine that works is remembered for the next model
            if (self.statusBar().currentMessage() == self._keeps_settings_text()
                    and not self.control.settings_differ_from_running()):
                self.statusBar().clearMessage()  # it runs the settings shown now: the line is no longer true
        notes = [note.render() for note in change.notes]  # Text sentences (settle_network, argv)
        if state is State.STARTING and notes:  # e.g. "port 8080 is in use; using 8081 instead"
            self.statusBar().showMessage(" ".join(notes), 20_000)
        if state is State.STOPPED and self._close_state == "stopping":
            self._finish_close()

    # --- closing: stop the server, never leave an orphan ------------------------------------------

    def closeEvent(self, event) -> None:
        if self._close_state == "done":
            event.accept()
            return
        if self._close_state == "open" and self.chat_tab.is_streaming() and not self._confirm_close():
            event.ignore()
            return
        self._save_window()
        workers.cancel_all()  # a running probe or hash stops early; run_gui waits for them after the loop
        if not self.control.is_running():
            self.chat_tab.shutdown()  # its connection to a stopped server is closed too, not left to the collector
            self._finish_close()
            event.accept()
            return
        event.ignore()
        if self._close_state != "stopping":
            self._close_state = "stopping"
            self.chat_tab.shutdown()
            self.statusBar().showMessage(self.tr("Stopping the server before closing…"))
            central = self.centralWidget()
            if central is not None:
                central.setEnabled(False)
            self.control.stop()
            self._close_timer.start()  # gives up waiting after a while; run_gui then stops the server itself

    def _confirm_close(self) -> bool:
        from PySide6.QtWidgets import (
            QMessageBox,  # dialogs are imported when used: faster start-up
        )

        answer = QMessageBox.question(
            self, self.tr("Close GGUF Launcher?"),
            self.tr("A reply is still being written. Closing stops it and the server. Close anyway?"))
        return answer == QMessageBox.StandardButton.Yes

    def _finish_close(self) -> None:
        if self._close_state == "done":
            return
        self._close_state = "done"
        self.machine.stop()
        self.close()

    def _save_window(self) -> None:
        self.store.settings.set("window_geometry", bytes(self.saveGeometry().toBase64().data()).decode("ascii"))
        self.store.settings.set("window_state", bytes(self.splitter.saveState().toBase64().data()).decode("ascii"))
        self.store.save_soon(0)

    def shutdown_blocking(self) -> None:
        """After the event loop ended (run_gui): make sure no server child survives us."""
        self.control.shutdown_blocking()
        self.store.flush_blocking()
