"""Turns the Server panel's requests (``attach(panel)``: the one way a panel is wired) into supervisor actions
with the model session's config (``session.config``: what the Settings step shows) and the engine the session
already looked up for it (``session.backend_for``).

One ``Supervisor`` per model: a new model (or the first Start) builds one in a worker (it opens its log
file), later Starts and Restarts hand it the current settings first. ``started(config)``: a config was handed to a
supervisor for a Start or Restart. All actions go through the
``SupervisorBridge``'s single action thread, so they run in click order and never on the GUI thread.

It also owns the window's one engine rebuild (``engine_rebuild``; its step is ``rebuild_step``): "Rebuild the engine
and restart" rebuilds the built-in engine in a worker, then restarts the server with the settings it crashed with.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from app.core.launch.config import BACKEND_EMBEDDED, LaunchConfig, fix_changes
from app.core.server.events import IDLE_STATES, State
from app.ui.steps.machine.engine_rebuild import EngineRebuild, RebuildStep
from app.ui.workers import run_task

if TYPE_CHECKING:
    from app.core.engine.selftest import EngineCheck
    from app.core.launch.backends import BackendInfo
    from app.core.server.supervisor import Supervisor
    from app.ui.steps.server.server_panel import ServerPanel
    from app.ui.steps.server.supervisor_bridge import SupervisorBridge
    from app.ui.steps.settings.settings_panel import SettingsPanel



def same_model(a: str, b: str) -> bool:
    return os.path.abspath(os.path.expanduser(a)) == os.path.abspath(os.path.expanduser(b))


def _make_supervisor(config: LaunchConfig) -> Supervisor:  # worker thread
    from app.core.server.supervisor import Supervisor
    from app.core.server.watchdog import WatchdogLimits

    return Supervisor(config, memory_watchdog=WatchdogLimits())


class ServerControl(QObject):
    message = Signal(str)
    started = Signal(object)  # LaunchConfig

    def __init__(self, bridge: SupervisorBridge, settings_panel: SettingsPanel, parent: QObject | None = None, *,
                 rebuild_step: RebuildStep | None = None) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self.settings_panel = settings_panel
        self.session = settings_panel.session  # the window's one config: what Start and Restart run
        self._retired: list[Supervisor] = []
        self.engine_rebuild = EngineRebuild(rebuild_step, self)
        self.engine_rebuild.finished.connect(self._on_engine_rebuilt)
        self.engine_rebuild.failed.connect(self._on_engine_rebuild_failed)
        self._restart_after_rebuild = False

    def attach(self, panel: ServerPanel) -> None:
        """The panel's buttons run here; it follows the engine rebuild (Start and Restart wait for it)."""
        panel.startRequested.connect(self.start)
        panel.stopRequested.connect(self.stop)
        panel.restartRequested.connect(self.restart)
        panel.applyFixRequested.connect(self.apply_fix)
        panel.rebuildRequested.connect(self.rebuild_and_restart)
        panel.follow_rebuild(self.engine_rebuild)

    @property
    def rebuild_step(self) -> RebuildStep:
        """``step(progress, cancel) -> EngineCheck``, run in a worker (default: core's ``rebuild_embedded``)."""
        return self.engine_rebuild.step

    @rebuild_step.setter
    def rebuild_step(self, step: RebuildStep) -> None:
        self.engine_rebuild.step = step

    @property
    def supervisor(self) -> Supervisor | None:
        return self.bridge.supervisor

    def state(self) -> State:
        sup = self.supervisor
        return sup.state if sup is not None else State.STOPPED

    def is_running(self) -> bool:
        return self.state() not in IDLE_STATES or self.bridge.is_busy()

    def _backend(self, config: LaunchConfig) -> BackendInfo | None:
        """The engine the session already looked up for ``config`` (None: the supervisor looks it up)."""
        return self.session.backend_for(config)

    def start(self) -> None:
        config = self.session.config
        if config is None:
            self._refuse("start", self.tr("Open a model that passes its checks first."))
            return
        sup = self.supervisor
        if sup is not None and same_model(sup.config.model, config.model):
            sup.set_config(config, self._backend(config))
            self.started.emit(config)
            self.bridge.start()
            return
        self._switch_to(config)

    def _switch_to(self, config: LaunchConfig) -> None:
        """Another model (or the first start): stop and retire the old supervisor, then build one for this
        config, so the new server never races the old one for its port."""
        old = self.supervisor
        backend = self._backend(config)
        if old is None:
            self._make(config, backend)
            return
        self.bridge.set_supervisor(None)
        self._retired.append(old)

        def closed(_result: object = None) -> None:
            self._retired.remove(old)
            self._make(config, backend)

        run_task(old.close, on_done=closed, on_error=closed, owner=self)

    def _make(self, config: LaunchConfig, backend: BackendInfo | None) -> None:
        run_task(_make_supervisor, config, on_done=lambda sup: self._on_supervisor(sup, config, backend),
                 on_error=self._on_supervisor_failed)

    def _on_supervisor(self, supervisor: Supervisor, config: LaunchConfig, backend: BackendInfo | None) -> None:
        if backend is not None:
            supervisor.set_config(supervisor.config, backend)  # its first launch uses the session's engine
        self.bridge.set_supervisor(supervisor)
        self.started.emit(config)
        self.bridge.start()

    def _on_supervisor_failed(self, error: BaseException) -> None:
        self.bridge.actionFinished.emit("start")
        self.bridge.actionFailed.emit("start", error)

    def _refuse(self, action: str, text: str) -> None:
        self.bridge.actionFinished.emit(action)
        self.message.emit(text)

    def stop(self) -> None:
        self.bridge.stop()

    def restart(self) -> None:
        config = self.session.config
        sup = self.supervisor
        if sup is None:
            self.start()
            return
        if config is not None and not same_model(config.model, sup.config.model):
            self._switch_to(config)  # Restart after opening another model runs that model
            return
        if config is not None:
            sup.set_config(config, self._backend(config))
            self.started.emit(config)
        self.bridge.restart()

    def apply_fix(self, fix: dict) -> None:
        """Apply a crash's settings fix to the Settings step (core's ``fix_changes``), then restart with the
        Settings' config, so the supervisor runs exactly what the Settings step shows and saves. (A rebuild fix
        never comes here: the crash card asks for ``rebuild_and_restart``.)"""
        if self.session.config is None:  # no model in the Settings step: the supervisor applies it
            self.bridge.apply_fix_and_restart(dict(fix))
            return
        self.settings_panel.apply_changes(fix_changes(fix))
        self.restart()
        self.message.emit(self.tr("The fix is in the settings now; the server restarts with them."))

    def settings_differ_from_running(self) -> bool:
        """Whether the Settings step shows other settings than the running server's (those it reached Ready with;
        the model's path, a port the launch had to move and a key it created are not compared)."""
        sup, config = self.supervisor, self.session.config
        running = sup.last_good_config if sup is not None else None
        if running is None or config is None:
            return False
        return config.with_changes(model=running.model, port=running.port, api_key=running.api_key) != running

    # --- the engine rebuild ------------------------------------------------------------------------

    def rebuild_engine(self) -> None:
        """Rebuild the built-in engine (the Machine step's button); the server is not restarted."""
        self.engine_rebuild.start()

    def rebuild_and_restart(self) -> None:
        """Rebuild the built-in engine, then restart the server with the same settings (the crash card's fix)."""
        self._restart_after_rebuild = True
        self.engine_rebuild.start()  # already running (started from the Machine step): restart when it is done

    def _on_engine_rebuilt(self, _check: EngineCheck) -> None:
        restart, self._restart_after_rebuild = self._restart_after_rebuild, False
        sup = self.supervisor
        if sup is None:
            return
        if restart:
            self.bridge.restart()
        elif self.state() not in IDLE_STATES and sup.config.backend == BACKEND_EMBEDDED:
            self.message.emit(self.tr("The engine was rebuilt; the server uses it after its next restart."))

    def _on_engine_rebuild_failed(self, _error: BaseException) -> None:
        self._restart_after_rebuild = False  # the card shows why; the server stays as it is

    def shutdown_blocking(self) -> None:
        """Only after the event loop ended: stop every server this window started, waiting for each."""
        self.bridge.close()
        self.bridge.wait_for_actions(30_000)
        for sup in [self.supervisor, *self._retired]:
            if sup is not None:
                sup.close()
