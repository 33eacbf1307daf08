"""Qt adapter over a core ``Supervisor``: its worker-thread events become GUI-thread signals.

The supervisor calls subscribers from its reader/monitor threads. Widgets must only be touched on the
GUI thread, so every event is re-emitted through a queued private signal. Log lines are the flood case:
they are collected in a bounded deque (no lock: see ``_buffer_log_line``) and flushed as one ``logLines`` batch at most
every ``flush_interval_ms``, so 10,000 lines/s cost ~20 signal deliveries per second, not 10,000.

Actions (start / stop / restart / apply fix) block in the core (process waits, readiness polls), so they
run on a private ``QThreadPool``; the GUI learns the outcome from the state events and ``actionFailed``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, QThreadPool, QTimer, Signal, Slot

from app.core.launch.config import ConfigChanges
from app.core.server.events import (
    Crashed,
    Event,
    LogEvent,
    MemoryLevel,
    OffloadShort,
    PlannedRestart,
    Restarting,
    StateChanged,
    VramTaken,
)

if TYPE_CHECKING:  # the types only: the supervisor's module (and logging.handlers) load with the first server
    from app.core.process.child_log import LogLine
    from app.core.server.supervisor import Supervisor

DEFAULT_FLUSH_MS = 50
DEFAULT_MAX_PENDING = 20_000  # more than any log pane keeps; older pending lines are skipped, not queued


class SupervisorBridge(QObject):
    """Signals (all delivered on the GUI thread):

    - ``stateChanged(State state, StateChanged change)``: every state transition; ``state`` is core's
      :class:`~app.core.server.events.State` itself, ``change`` the event's typed payload (url, diagnosis, reason,
      notes, restart_count ...).
    - ``crashed(object diagnosis)``: a ``Diagnosis`` (may be ``None`` when the core gave none).
    - ``restarting(int attempt)``: an automatic restart begins.
    - ``logLines(list lines)``: a batch of ``LogLine`` (or ``str`` for the skipped-lines notice).
    - ``actionStarted(str name)`` / ``actionFinished(str name)``: an action began / ended in the pool.
    - ``actionFailed(str name, object error)``: an action raised (usually a ``UserError`` with a ``Text``).
    - ``supervisorChanged(object supervisor)``: ``set_supervisor`` replaced the wrapped supervisor.
    """

    stateChanged = Signal(object, object)  # (State, StateChanged)
    crashed = Signal(object)
    restarting = Signal(int)
    memoryChanged = Signal(object, object)  # (watchdog Level, MemoryReading)
    vramTaken = Signal(object)  # a watchdog VramGrab: another program took GPU memory while the server runs
    logLines = Signal(object)  # a Python list; Signal(list) would convert 20,000 lines to QVariants (11 ms)
    actionStarted = Signal(str)
    actionFinished = Signal(str)
    actionFailed = Signal(str, object)
    supervisorChanged = Signal(object)

    _eventArrived = Signal(object)  # worker thread -> GUI thread
    _flushRequested = Signal()  # worker thread -> GUI thread, at most once per flush interval
    _actionDone = Signal(str, object, object)  # pool thread -> GUI thread (name, result, error or None)

    def __init__(
        self,
        supervisor: Supervisor | None = None,
        parent: QObject | None = None,
        *,
        flush_interval_ms: int = DEFAULT_FLUSH_MS,
        max_pending: int = DEFAULT_MAX_PENDING,
    ) -> None:
        super().__init__(parent)
        self._supervisor: Supervisor | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._pending: deque = deque(maxlen=max_pending)
        self._skipped = 0
        self._flush_scheduled = False
        self._flush_interval_ms = flush_interval_ms
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)  # click order; start() returns once spawned, so Stop never waits long
        self._busy: set[str] = set()
        self._eventArrived.connect(self._deliver_event, Qt.ConnectionType.QueuedConnection)
        self._flushRequested.connect(self._schedule_flush, Qt.ConnectionType.QueuedConnection)
        self._actionDone.connect(self._finish_action, Qt.ConnectionType.QueuedConnection)
        if supervisor is not None:
            self.set_supervisor(supervisor)

    # --- wiring -------------------------------------------------------------------------------

    @property
    def supervisor(self) -> Supervisor | None:
        return self._supervisor

    def set_supervisor(self, supervisor: Supervisor | None) -> None:
        """Follow another supervisor (e.g. one built from a new launch config). Old events stop."""
        self._detach()
        self._supervisor = supervisor
        if supervisor is not None:
            self._unsubscribe = supervisor.subscribe(lambda event: self._on_core_event(supervisor, event))
        self.supervisorChanged.emit(supervisor)

    def replay_tail(self, n: int = 2000) -> None:
        """Send the supervisor's in-memory tail as one ``logLines`` batch (e.g. to fill a new log pane)."""
        if self._supervisor is not None:
            lines = list(self._supervisor.tail(n))
            if lines:
                self.logLines.emit(lines)

    def close(self) -> None:
        """Stop listening (non-blocking). Call ``wait_for_actions`` too when the app exits."""
        self._detach()

    def _detach(self) -> None:
        if self._unsubscribe is not None:
            try:
                self._unsubscribe()
            finally:
                self._unsubscribe = None

    # --- core events (worker threads) ----------------------------------------------------------

    def _on_core_event(self, source: Supervisor, event: Event) -> None:
        """Called on the supervisor's threads: never touch widgets here."""
        if isinstance(event.payload, LogEvent):
            self._buffer_log_line(event.payload.line)
        else:
            self._eventArrived.emit((source, event))

    def _buffer_log_line(self, line: LogLine | str) -> None:
        # No lock on this hot path: a reader thread re-taking a lock 10,000 times a second starves the GUI
        # thread waiting for it (measured: 111 ms stalls). deque.append/popleft are atomic; the order
        # "append, then look at the flag" here and "clear the flag, then drain" in _flush loses no wake-up.
        pending = self._pending
        if len(pending) == pending.maxlen:
            self._skipped += 1  # approximate under two reader threads; it only words a notice
        pending.append(line)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self._flushRequested.emit()

    def push_log_lines(self, lines: list[LogLine | str]) -> None:
        """Feed lines from any thread through the same batching path (used by benchmarks and replays)."""
        for line in lines:
            self._buffer_log_line(line)

    # --- GUI thread ----------------------------------------------------------------------------

    @Slot()
    def _schedule_flush(self) -> None:
        QTimer.singleShot(self._flush_interval_ms, self._flush)

    @Slot()
    def _flush(self) -> None:
        self._flush_scheduled = False
        pending = self._pending
        batch = [pending.popleft() for _ in range(len(pending))]
        skipped, self._skipped = self._skipped, 0
        if skipped:
            notice = self.tr("… {n} earlier lines skipped here (the log file has them all)").format(n=skipped)
            batch.insert(0, notice)
        if batch:
            self.logLines.emit(batch)

    def flush_now(self) -> None:
        """Deliver buffered lines immediately (tests, or before saving the visible log)."""
        self._flush()

    @Slot(object)
    def _deliver_event(self, sourced: tuple[Supervisor, Event]) -> None:
        source, event = sourced
        if source is not self._supervisor:
            return  # queued before set_supervisor() switched to another one: stale
        payload = event.payload
        if isinstance(payload, StateChanged):
            self.stateChanged.emit(payload.state, payload)
        elif isinstance(payload, Crashed):
            self.crashed.emit(payload.diagnosis)
        elif isinstance(payload, Restarting):
            self.restarting.emit(payload.attempt)
        elif isinstance(payload, MemoryLevel):
            self.memoryChanged.emit(payload.level, payload.reading)
        elif isinstance(payload, VramTaken):
            self.vramTaken.emit(payload.grab)
        elif isinstance(payload, (PlannedRestart, OffloadShort)):  # the card says why, as for a crash (it runs on)
            self.crashed.emit(payload.diagnosis)

    # --- actions (run off the GUI thread) ------------------------------------------------------

    def start(self) -> None:
        self._run_action("start", lambda sup: sup.start())

    def stop(self) -> None:
        self._run_action("stop", lambda sup: sup.stop())

    def restart(self) -> None:
        self._run_action("restart", lambda sup: sup.restart())

    def recover(self) -> None:
        """Restart with the last settings that reached READY (presenter mode's Recover)."""
        def action(sup: Supervisor) -> None:
            if sup.last_good_config is not None:
                sup.set_config(sup.last_good_config)
            sup.restart()

        self._run_action("recover", action)

    def apply_fix_and_restart(self, fix: ConfigChanges | Mapping[str, Any]) -> None:
        """The supervisor applies a fix to its own config (core's ``LaunchConfig.apply``) and restarts."""
        changes = ConfigChanges(fix)
        self._run_action("apply_fix", lambda sup: sup.apply_fix_and_restart(changes))

    def is_busy(self) -> bool:
        return bool(self._busy)

    def wait_for_actions(self, timeout_ms: int = 30_000) -> bool:
        """BLOCKING: for app exit and tests only, never from a slot of a live window."""
        return self._pool.waitForDone(timeout_ms)

    def _run_action(self, name: str, action: Callable[[Supervisor], object]) -> None:
        supervisor = self._supervisor
        if supervisor is None:
            return
        self._busy.add(name)
        self.actionStarted.emit(name)

        def job() -> None:
            result = error = None
            try:
                result = action(supervisor)
            except Exception as exc:  # noqa: BLE001 - reported to the GUI as a value, never raised in a pool thread
                error = exc
            self._actionDone.emit(name, result, error)

        self._pool.start(job)

    @Slot(str, object, object)
    def _finish_action(self, name: str, result: object, error: object) -> None:
        self._busy.discard(name)
        self.actionFinished.emit(name)
        if error is not None:
            self.actionFailed.emit(name, error)

