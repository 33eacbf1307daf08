"""Run one model server and keep it running: start, readiness gate, logs, stop, crash → diagnosis → restart.

Every state change is an :class:`Event` handed to subscribers (CLI, GUI) from worker threads; the GUI
marshals them to its own thread. Callbacks must return quickly and must not call ``wait_for``/``stop``.
Nothing here blocks for long except ``stop()``/``restart()``, which wait for the child to go (at most the grace
period plus a kill).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import httpx

from app.core.diagnosis import Diagnosis, offload
from app.core.launch.backends import (
    BackendInfo,
    build_argv_with_notes,
    command_line,
    key_environment,
    resolve_backend,
    served_name,
)
from app.core.launch.config import ConfigChanges, LaunchConfig
from app.core.launch.ports import base_url, is_loopback, is_port_free, new_api_key, settle_network
from app.core.problem import UserError
from app.core.process.child import ChildProcess
from app.core.process.child_log import LogLine, ServerLog
from app.core.server import crash as diag
from app.core.server.diagnosis_log import record_diagnosis
from app.core.server.events import (
    ACTIVE_STATES,
    Crashed,
    Event,
    EventKind,
    LogEvent,
    MemoryLevel,
    OffloadShort,
    PlannedRestart,
    Restarting,
    State,
    StateChanged,
    VramTaken,
)
from app.core.server.identity import prove_ours
from app.core.server.policy import DEFAULT_BACKOFF_S, CrashPolicy
from app.core.server.readiness import POLL_INTERVAL_S, ReadinessProbe, listens_on, ready_time_limit
from app.core.server.watchdog import MemoryWatchdog, WatchdogLimits, sample_server_memory
from app.core.text import T, Text

logger = logging.getLogger(__name__)

__all__ = ["Event", "EventKind", "LogLine", "State", "StateChanged", "Supervisor"]

HISTORY_EVENTS = 500
SMALLER_CONTEXT_WITHIN_S = 600.0  # a second planned restart this soon: the same settings ran short again
MIN_CONTEXT_AFTER_WATCHDOG = 1024
Subscriber = Callable[[Event], None]


class Supervisor:
    def __init__(self, config: LaunchConfig, *, auto_restart: bool = True, max_crashes: int = 3,
                 crash_window_s: float = 60.0, rlimits: dict[int, Any] | None = None,
                 ready_timeout_s: float | None = None, stop_grace_s: float = 5.0,
                 backoff_s: Iterable[float] = DEFAULT_BACKOFF_S, log_name: str | None = None,
                 extra_env: dict[str, str] | None = None, memory_watchdog: WatchdogLimits | None = None,
                 backend: BackendInfo | None = None):
        # this server's API key, made once and kept across its restarts (the chat, the share and other programs keep
        # working); never written anywhere, handed to the engine through its environment (key_environment)
        self._session_key = new_api_key()
        self._config = self._keyed(config)
        self.crash_policy = CrashPolicy(auto_restart=auto_restart, max_crashes=max_crashes, window_s=crash_window_s,
                                        backoff_s=backoff_s)
        self.rlimits = rlimits
        self.ready_timeout_s = ready_timeout_s
        self.stop_grace_s = stop_grace_s
        self._extra_env = dict(extra_env or {})
        self._cond = threading.Condition(threading.RLock())
        self._emit_lock = threading.RLock()
        self._state = State.STOPPED
        self._published_state = State.STOPPED  # what wait_for() sees: set after the event went out
        self._state_seq = 0
        self._generation = 0  # bumped by every start/stop so late callbacks of an old child are ignored
        self._child: ChildProcess | None = None
        self._subscribers: list[Subscriber] = []
        self._measured_load_s: float | None = None
        self._block_count: int | None = None
        self._ready_generations: set[int] = set()
        self._offload_told: set[int] = set()  # generations whose short GPU offload was already said
        self._start_pending = False
        self.history: deque[Event] = deque(maxlen=HISTORY_EVENTS)
        self.backend: BackendInfo | None = None
        # the engine the caller already looked up for ``config`` (the window's model session, the probe): the next
        # launch uses it instead of looking again; later launches (a crash's restart, after a rebuild) look again
        self._handed_backend = backend
        self.argv: list[str] = []
        self.notes: list = []
        self.restart_count = 0
        self.planned_restarts = 0  # restarts on purpose (the memory watchdog), not counted as crashes
        self._last_planned_at: float | None = None
        self.last_good_config: LaunchConfig | None = None  # the settings of the last server that became READY
        self.last_diagnosis: Diagnosis | None = None
        self.offload_diagnosis: Diagnosis | None = None  # a load put fewer layers on the GPU than asked
        self.load_seconds: float | None = None
        self.proof_seconds: float | None = None  # how long proving the answering server ours took, before Ready
        # where the readiness gate asks: None is the server's own host and port; a test points it at another program
        self.probe_address: tuple[str, int] | None = None
        self.log = ServerLog(log_name or f"server-{Path(config.model).stem}")
        self._closers: list[Callable[[], None]] = []  # what lives exactly as long as this supervisor (add_closer)
        # the memory watchdog (app/core/server/watchdog.py) for servers people chat with; probes and self-tests
        # measure on purpose and run without one
        self.watchdog = MemoryWatchdog(self, memory_watchdog) if memory_watchdog is not None else None

    # -- properties ------------------------------------------------------------------------------------------
    @property
    def state(self) -> State:
        return self._state

    @property
    def config(self) -> LaunchConfig:
        return self._config

    @property
    def pid(self) -> int | None:
        child = self._child
        return child.pid if child is not None and child.running else None

    @property
    def child(self) -> ChildProcess | None:
        return self._child

    @property
    def api_key(self) -> str | None:
        """The key this server wants (None: programs on this computer connect without one)."""
        return self._config.api_key

    def _keyed(self, config: LaunchConfig) -> LaunchConfig:
        """``config`` with this server's key, unless the user chose one or lets this computer connect without."""
        if config.api_key or (not config.local_key and is_loopback(config.host)):
            return config
        return config.with_changes(api_key=self._session_key)

    @property
    def url(self) -> str:
        return base_url(self._config.host, self._config.port)

    @property
    def command_line(self) -> str:
        return command_line(self.argv) if self.argv else ""

    def snapshot(self, lang: str | None = None) -> dict[str, Any]:
        """Everything a status line or bug report needs, JSON-safe."""
        diagnosis = self.last_diagnosis
        return {"state": self._state.value, "pid": self.pid, "url": self.url, "restart_count": self.restart_count,
                "load_seconds": self.load_seconds, "command_line": self.command_line,
                "backend": self.backend.to_dict() if self.backend else None,
                "last_diagnosis": diagnosis.to_dict(lang) if diagnosis else None, "log_file": str(self.log.path)}

    def tail(self, n: int = 200) -> list[LogLine]:
        return self.log.tail(n)

    # -- subscribers -----------------------------------------------------------------------------------------
    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        with self._cond:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._cond:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def _emit(self, event: Event) -> None:
        with self._emit_lock:
            if not isinstance(event.payload, LogEvent):
                self.history.append(event)
                sentence = event.sentence()
                self.log.append("app", f"{event.kind} {event.state.value}: {sentence.render('en') if sentence else ''}")
            with self._cond:
                subscribers = list(self._subscribers)
            for callback in subscribers:
                try:
                    callback(event)
                except Exception:  # a broken subscriber must not kill supervision
                    logger.warning("a subscriber failed on the %s event", event.kind.value, exc_info=True)

    def _set_state(self, state: State, generation: int | None = None, *, only_from: State | None = None,
                   **fields: Any) -> bool:
        """Change state (only if ``generation`` is still current) and tell everyone (a :class:`StateChanged` with
        ``fields``). False when stale.

        Waiters in wait_for() wake only after subscribers got the event, so a caller that waited for READY
        finds the READY event already in ``history`` (and the CLI has printed it).
        """
        with self._cond:
            if generation is not None and generation != self._generation:
                return False
            if only_from is not None and self._state is not only_from:
                return False
            self._state = state
            self._state_seq += 1
            seq = self._state_seq
        self._emit(Event.now(state, StateChanged(state, self.restart_count, **fields)))
        with self._cond:
            if seq == self._state_seq:
                self._published_state = state
                self._cond.notify_all()
        return True

    def wait_for(self, states: State | Iterable[State], timeout: float | None = None) -> State:
        """Block until the state is one of ``states`` (its event already delivered) or ``timeout``; the state then."""
        wanted = {states} if isinstance(states, State) else set(states)
        with self._cond:
            self._cond.wait_for(lambda: self._published_state in wanted, timeout)
            return self._published_state

    # -- start -----------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the server (returns once the child is spawned; readiness is reported by events).

        Raises UserError when it cannot even be spawned (missing binary, bad settings); the state is then FAILED.
        """
        with self._cond:
            if self._state in ACTIVE_STATES or self._start_pending:
                return  # a double click starts one server, not two
            self._start_pending = True
            self.crash_policy.reset()
        try:
            self._launch()
        finally:
            self._start_pending = False

    def _launch(self, *, if_generation: int | None = None) -> None:
        with self._cond:
            if if_generation is not None and if_generation != self._generation:
                return  # stop() or a manual restart came first: a scheduled restart must not revive the server
            self._generation += 1
            generation = self._generation
        config = self._config
        try:
            backend = self._backend_for(config)
            config, notes = settle_network(config.with_changes(model=str(Path(config.model).expanduser().absolute())),
                                           key=self._session_key)
            _refuse_busy_port(config)
            argv, arg_notes = build_argv_with_notes(config, backend)
        except PortTaken as error:
            self._remember(error.diagnosis)
            self._set_state(State.FAILED, generation, diagnosis=error.diagnosis)
            raise
        except UserError as error:
            self._fail_to_start(generation, error, [config.server_bin or config.backend])
            raise
        with self._cond:
            self._config, self.backend, self.argv, self.notes = config, backend, argv, notes + arg_notes
        self._set_state(State.STARTING, generation, command_line=command_line(argv), notes=tuple(self.notes),
                        backend=backend.to_dict())
        oom_before = diag.oom_snapshot()
        try:
            child = ChildProcess(argv, on_line=lambda stream, text: self._on_line(generation, stream, text),
                                 on_exit=lambda c, rc: self._on_exit(generation, c, rc, oom_before),
                                 env=self._child_env(config, backend), rlimits=self.rlimits,
                                 sample_memory=sample_server_memory)
        except OSError as error:
            diagnosis = self._fail_to_start(generation, error, argv)
            raise UserError(diagnosis.message, diagnosis.next_step, (str(error),)) from error
        with self._cond:
            current = generation == self._generation
            if current:
                self._child = child
        if not current:  # stop() ran while we were spawning: this child must not live on untracked
            child.stop(self.stop_grace_s)
            return
        threading.Thread(target=self._gate, args=(generation, child, config, backend),
                         name=f"ready-{child.pid}", daemon=True).start()
        if self._block_count is None:  # read now, off the crash path, for "fewer GPU layers" fixes
            threading.Thread(target=self._read_block_count, args=(config.model,), daemon=True).start()

    def _backend_for(self, config: LaunchConfig) -> BackendInfo:
        """The handed engine when it is the one ``config`` asks for (once), else a fresh look-up."""
        handed, self._handed_backend = self._handed_backend, None
        if handed is not None and handed_matches(handed, config):
            return handed
        return resolve_backend(config)

    def _read_block_count(self, model: str) -> None:
        self._block_count = diag.block_count(model)

    def _child_env(self, config: LaunchConfig, backend: BackendInfo) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONUNBUFFERED"] = "1"  # embedded server: lines arrive as printed
        env.update(self._extra_env)
        for name, value in key_environment(config, backend).items():  # the key: never on the command line
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        return env

    def _fail_to_start(self, generation: int, error: UserError | OSError, argv: list[str]) -> Diagnosis:
        diagnosis = diag.start_failed(error, argv, self._config)
        self._remember(diagnosis)
        self._set_state(State.FAILED, generation, diagnosis=diagnosis)
        return diagnosis

    # -- readiness gate --------------------------------------------------------------------------------------
    def _gate(self, generation: int, child: ChildProcess, config: LaunchConfig, backend: BackendInfo) -> None:
        limit = ready_time_limit(config.model, self._measured_load_s, self.ready_timeout_s)
        host, port = self.probe_address or (config.host, config.port)
        probe = ReadinessProbe(base_url(host, port) + backend.readiness_path, config.api_key)
        started = time.monotonic()
        owner_checked = False
        try:
            while child.running and generation == self._generation:
                answer = probe.check()
                if answer != "silent" and not owner_checked:
                    owner_checked = True
                    if listens_on(child.pid, port) is False:  # another program answers on our port
                        self._port_taken(generation, child, config, port, T(
                            "the answer on port {port} came from another program, not from the server just started",
                            "端口 {port} 上的回答来自其他程序，而不是刚启动的服务器", port=port).render())
                        return
                if answer == "ready":
                    if self._proved_ours(generation, child, config, backend, (host, port), probe.client):
                        self._mark_ready(generation, child, time.monotonic() - started)
                    return
                if answer == "loading":
                    self._set_state(State.LOADING, generation, only_from=State.STARTING, pid=child.pid)
                if time.monotonic() - started > limit:
                    self._readiness_timed_out(generation, child, limit, probe.seen.describe())
                    return
                child.wait(POLL_INTERVAL_S)
        finally:
            probe.close()

    def _proved_ours(self, generation: int, child: ChildProcess, config: LaunchConfig, backend: BackendInfo,
                     address: tuple[str, int], client: httpx.Client) -> bool:
        """Just before Ready: the answering server is our child (its socket) serving our model (its answers).
        "Another program" fails the start with the busy-port sentence; "cannot tell" is logged and let through."""
        started = time.monotonic()
        proof = prove_ours(child.pid, address[1], base_url(*address), api_key=config.api_key, model=config.model,
                           alias=served_name(config), kind=backend.kind, client=client)
        self.proof_seconds = time.monotonic() - started
        if proof.ours is False:
            logger.warning("the server on port %s is not ours: %s", address[1], proof.why)
            self._port_taken(generation, child, config, address[1], T(
                "the answer on port {port} came from another program, not from the server just started ({why})",
                "端口 {port} 上的回答来自其他程序，而不是刚启动的服务器（{why}）", port=address[1],
                why=proof.why).render())
            return False
        if proof.ours is None:
            logger.warning("the server on port %s could not be proved ours, taken as ours: %s", address[1], proof.why)
        else:
            logger.info("the server on port %s is ours (%.1f ms): %s", address[1], 1000 * self.proof_seconds,
                        proof.why)
        return True

    def _mark_ready(self, generation: int, child: ChildProcess, seconds: float) -> None:
        self.load_seconds = seconds
        self._ready_generations.add(generation)
        self._measured_load_s = max(seconds, self._measured_load_s or 0.0)
        self.last_good_config = self._config  # what Recover goes back to
        self._check_offload(generation)  # said before READY: whoever waits for READY finds it in the history
        self._set_state(State.READY, generation, pid=child.pid, url=self.url, load_seconds=round(seconds, 3))

    def _port_taken(self, generation: int, child: ChildProcess, config: LaunchConfig, port: int,
                    evidence: str) -> None:
        """The answer on the port came from a program that is not this server: said at once, not Ready. Our child
        is stopped first, so the sentence names the program that holds the port, not our own server."""
        with self._cond:
            if generation != self._generation:
                return
            self._generation += 1  # the exit that follows is ours, not a crash
            generation = self._generation
        child.stop(self.stop_grace_s)
        diagnosis = port_taken_diagnosis(config.with_changes(port=port), evidence)
        self._remember(diagnosis)
        self._set_state(State.FAILED, generation, diagnosis=diagnosis, pid=child.pid)

    def _readiness_timed_out(self, generation: int, child: ChildProcess, limit: float, seen: str) -> None:
        with self._cond:
            if generation != self._generation:
                return
            self._generation += 1  # the exit that follows is ours, not a crash
            generation = self._generation
        diagnosis = diag.readiness_timeout(limit, seen, self.log.texts(), self._config)
        self._remember(diagnosis)
        child.stop(self.stop_grace_s)
        self._emit(Event.now(State.FAILED, Crashed(child.pid, child.returncode, None, diagnosis)))
        self._set_state(State.FAILED, generation, diagnosis=diagnosis, pid=child.pid)

    def _remember(self, diagnosis: Diagnosis) -> None:
        """The last diagnosis, here and in the machine's diagnoses log (a diagnostics report reads it)."""
        self.last_diagnosis = diagnosis
        record_diagnosis(diagnosis, model=self._config.model, log_name=self.log.path.name)

    # -- output and exit -------------------------------------------------------------------------------------
    def _on_line(self, generation: int, stream: str, text: str) -> None:
        line = self.log.append(stream, text)
        if generation != self._generation:
            return
        if self._state is State.STARTING:
            self._set_state(State.LOADING, generation, only_from=State.STARTING, pid=self.pid)
        self._emit(Event(line.time, self._state, LogEvent(line)))
        if generation in self._ready_generations and offload.is_offload_line(text):
            self._check_offload(generation)  # a load line that arrived after the readiness check

    def _check_offload(self, generation: int) -> None:
        """Fewer layers on the GPU than the config asks is said once per load (an ``offload`` event with its
        diagnosis), not left as a silent slowdown. Checked when the server is ready: the load lines are in."""
        if generation in self._offload_told or generation != self._generation:
            return
        backends = self.backend.compiled_backends if self.backend is not None else None
        total = self._block_count + 1 if self._block_count else None
        card, build_cuda = _card_and_cuda_build(self.backend)
        diagnosis = offload.offload_diagnosis(self.log.texts(), int(self._config.gpu_layers), backends=backends,
                                              total_hint=total, card=card, build_cuda=build_cuda)
        if diagnosis is None:
            return
        self._offload_told.add(generation)
        # not last_diagnosis (why a server stopped), nor the machine's diagnoses log: a probe's every attempt would
        # crowd the crashes out of it; the event's line is in this server's log
        self.offload_diagnosis = diagnosis
        self._emit(Event.now(self._state, OffloadShort(diagnosis, diagnosis.message)))

    def _on_exit(self, generation: int, child: ChildProcess, returncode: int, oom_before) -> None:
        with self._cond:
            if generation != self._generation or child.stop_requested:
                return  # stop()/restart() or the readiness gate handle their own exits
        diagnosis = diag.diagnose_exit(returncode, self.log.texts(), self._config, pid=child.pid,
                                       before=oom_before, rss_samples=list(child.rss_samples),
                                       block_count=self._block_count, was_ready=generation in self._ready_generations,
                                       program=self.argv[0] if self.argv else None)
        self._remember(diagnosis)
        self.crash_policy.record_crash()
        self._emit(Event.now(State.CRASHED, Crashed(child.pid, returncode, diagnosis.signal, diagnosis)))
        if not self._set_state(State.CRASHED, generation, pid=child.pid, exit_code=returncode, diagnosis=diagnosis):
            return
        reason = self.crash_policy.reason_not_to_restart(diagnosis.restartable)
        if reason:
            self._set_state(State.FAILED, generation, diagnosis=diagnosis, reason=reason)
            return
        self._restart_after_backoff(generation)

    def _restart_after_backoff(self, generation: int) -> None:
        delay = self.crash_policy.next_delay()
        attempt = self.restart_count + 1
        if not self._set_state(State.RESTARTING, generation, attempt=attempt, delay_s=delay):
            return
        self._emit(Event.now(State.RESTARTING, Restarting(attempt, delay)))
        with self._cond:
            self._cond.wait_for(lambda: generation != self._generation, delay)
            if generation != self._generation:
                return  # stopped or restarted by hand meanwhile
            self.restart_count = attempt
        try:
            self._launch(if_generation=generation)  # checked again under the lock: stop() may run right now
        except UserError as error:  # already FAILED with a diagnosis
            logger.info("automatic restart %s did not start: %s", attempt, error)

    # -- stop and restart ------------------------------------------------------------------------------------
    def stop(self) -> None:
        """Polite signal to the child's group, grace period, then kill. Blocks until it is gone."""
        with self._cond:
            self._generation += 1
            generation = self._generation
            child, self._child = self._child, None
            self._cond.notify_all()
            if self._state is State.STOPPED and child is None:
                return
        if child is not None and child.running:
            self._set_state(State.STOPPING, generation, pid=child.pid)
        exit_code = child.stop(self.stop_grace_s) if child is not None else None
        self._set_state(State.STOPPED, generation, exit_code=exit_code)

    def restart(self) -> None:
        """One-click restart with the current config (also leaves FAILED; the crash-loop count starts over)."""
        self.stop()
        with self._cond:
            self.restart_count += 1
            self.crash_policy.reset()
        self._launch()

    def planned_restart(self, reason: Text, facts: dict[str, Any] | None = None) -> bool:
        """Restart a READY server on purpose (the memory watchdog, before the kernel's OOM killer would act).

        Counted in ``planned_restarts``, not as a crash (the crash-loop guard does not see it); the diagnosis says
        it was planned and what was seen. False when the server is not READY (nothing to restart).
        """
        with self._cond:
            if self._state is not State.READY:
                return False
            self.planned_restarts += 1
            now, last = time.monotonic(), self._last_planned_at
            self._last_planned_at = now
        smaller = self._smaller_context_if_again(now, last)
        diagnosis = diag.watchdog_restart(reason, dict(facts or {}), smaller)
        self._remember(diagnosis)
        self._emit(Event.now(self._state, PlannedRestart(diagnosis, self.planned_restarts)))
        self.stop()
        try:
            self._launch()
        except UserError as error:  # already FAILED with a diagnosis
            logger.info("planned restart did not start: %s", error)
        return True

    def _smaller_context_if_again(self, now: float, last: float | None) -> tuple[int, int] | None:
        """A second planned restart within ``SMALLER_CONTEXT_WITHIN_S``: half the context (not below
        ``MIN_CONTEXT_AFTER_WATCHDOG``), since the same settings ran short again. (old, new) or None."""
        old = int(self._config.ctx)
        if last is None or now - last > SMALLER_CONTEXT_WITHIN_S or old <= MIN_CONTEXT_AFTER_WATCHDOG:
            return None
        new = max(MIN_CONTEXT_AFTER_WATCHDOG, old // 2)
        self._config = self._config.with_changes(ctx=new)
        return old, new

    def announce(self, payload: MemoryLevel | VramTaken) -> None:
        """An event from a helper that watches this server (the memory watchdog), in the same stream."""
        self._emit(Event.now(self._state, payload))

    def apply_fix_and_restart(self, changes: ConfigChanges | Mapping[str, Any]) -> LaunchConfig:
        """Apply a fix's or a recommendation's setting changes (e.g. {"gpu_layers": 20}) with core's one rule
        (:meth:`~app.core.launch.config.LaunchConfig.apply`) and restart. Returns the new config."""
        self._config = self._config.apply(ConfigChanges(changes))
        self.restart()
        return self._config

    def set_config(self, config: LaunchConfig, backend: BackendInfo | None = None) -> None:
        """Use another config from the next start on (the running child keeps its settings); ``backend``: the
        engine already looked up for it (used by the next launch when it still matches ``config``)."""
        if config.model != self._config.model:
            self._block_count = None
        self._config = self._keyed(config)
        self._handed_backend = backend

    def add_closer(self, close: Callable[[], None]) -> None:
        """Something that must not outlive this supervisor (the LAN share's proxy): ``close()`` calls it first."""
        self._closers.append(close)

    def close(self) -> None:
        for closer in self._closers:
            try:
                closer()
            except Exception:  # one broken helper must not leave the server running
                logger.warning("a helper of the supervisor failed to close", exc_info=True)
        if self.watchdog is not None:
            self.watchdog.close()
        self.stop()
        self.log.close()


def port_taken_diagnosis(config: LaunchConfig, evidence: str) -> Diagnosis:
    """The crash decoder's sentence for a busy port ("Port N is already used by …", with the free-port fix), for a
    port found taken before the server ran: no exit code, the evidence is what the app saw."""
    line = f"couldn't bind HTTP server socket, hostname: {config.host}, port: {config.port}"
    diagnosis = diag.diagnose_exit(1, [line], config, pid=0, before=None, rss_samples=[])
    return dataclasses.replace(diagnosis, evidence=(evidence,), exit_code=None, exit_meaning=T("", ""))


class PortTaken(UserError):
    """The port the server must use is held by another program (``diagnosis``: the busy-port sentence and fix)."""

    def __init__(self, diagnosis: Diagnosis):
        super().__init__(diagnosis.message, diagnosis.next_step, tuple(diagnosis.evidence), action=diagnosis.action)
        self.diagnosis = diagnosis


def handed_matches(backend: BackendInfo, config: LaunchConfig) -> bool:
    """True when ``backend`` is the engine ``config`` asks for: the same kind and, when a llama-server file is
    named, that file."""
    if backend.kind != config.backend:
        return False
    if not config.server_bin or not backend.path:
        return True
    return _same_file(backend.path, config.server_bin)


def _same_file(a: str, b: str) -> bool:
    return os.path.normcase(os.path.abspath(os.path.expanduser(a))) == os.path.normcase(
        os.path.abspath(os.path.expanduser(b)))


def _refuse_busy_port(config: LaunchConfig) -> None:
    """A port the user fixed (no free one picked instead) that another program holds: refused before the start,
    with the same sentence as a bind failure, instead of a server that loads the model first and then fails."""
    if config.pick_free_port or is_port_free(config.host, config.port):
        return
    raise PortTaken(port_taken_diagnosis(config, f"port {config.port} on {config.host}: cannot be bound (in use)"))


def _card_and_cuda_build(backend: Any) -> tuple[Any, str | None]:
    """NVML's first card and the CUDA version of an external llama-server's folder (file names only), for the
    offload check's "a CUDA 13 build on a card below compute capability 7.5" sentence; (None, None) when unknown."""
    path = getattr(backend, "path", None)
    if not path:
        return None, None
    from app.core.launch.engine_folder import quick_cuda_version

    build = quick_cuda_version(Path(path))
    if build is None:
        return None, None
    from app.core.hardware.gpu import read_gpus
    from app.core.launch.cuda_facts import CardFacts

    gpus = read_gpus()
    if not gpus:
        return None, build
    gpu = gpus[0]
    return CardFacts(gpu.name, gpu.compute_capability, gpu.driver_version, gpu.cuda_driver_version), build
