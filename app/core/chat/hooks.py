"""Connect a ChatClient to a running Supervisor: its URL, API key, per-slot context, crash reports, log.

The chat asks a supervisor only what :class:`ChatServer` names, so neither this module nor the chat pane depends
on the concrete ``app.core.server.supervisor.Supervisor`` (tests hand in a small stand-in)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from app.core.chat.client import BACKEND_LLAMA_SERVER, ChatClient
from app.core.chat.completion import model_chat_mode
from app.core.launch.config import LaunchConfig
from app.core.server.events import Crashed, Event, State, StateChanged

if TYPE_CHECKING:
    from app.core.diagnosis.value import Diagnosis
    from app.core.process.child_log import LogLine

RECENT_CRASH_S = 60.0
CRASH_REPORT_WAIT_S = 15.0


class ServerChild(Protocol):
    """The server process, as far as the chat asks: has it gone, and did someone ask it to?"""

    @property
    def running(self) -> bool: ...

    @property
    def stop_requested(self) -> bool: ...


@runtime_checkable
class ChatServer(Protocol):
    """What the chat needs from a supervised server: where it answers, its settings, its crashes and its log."""

    @property
    def url(self) -> str: ...

    @property
    def config(self) -> LaunchConfig: ...

    @property
    def state(self) -> State: ...

    @property
    def child(self) -> ServerChild | None: ...

    @property
    def history(self) -> Iterable[Event]: ...

    @property
    def last_diagnosis(self) -> Diagnosis | None: ...

    @property
    def last_good_config(self) -> LaunchConfig | None: ...

    def tail(self, n: int = 200) -> list[LogLine]: ...


def ctx_per_slot(config: LaunchConfig) -> int | None:
    """llama-server divides its context between the parallel slots; the embedded server has one."""
    if not config.ctx:
        return None
    if config.backend == BACKEND_LLAMA_SERVER and config.parallel and config.parallel > 1:
        return config.ctx // config.parallel
    return config.ctx


def running_config(supervisor: ChatServer) -> LaunchConfig:
    """The settings of the server that answers now: while READY, those it reached READY with (settings changed since
    wait for the next start, e.g. an edit in the Settings step); otherwise those it is being started with."""
    good = supervisor.last_good_config
    return good if good is not None and supervisor.state is State.READY else supervisor.config


def recent_crash(supervisor: ChatServer, within_s: float = RECENT_CRASH_S) -> Diagnosis | None:
    """The Diagnosis of a crash the supervisor saw in the last ``within_s`` seconds, else None.

    A restart can already be under way when the chat notices the dropped connection, so the state alone
    is not enough: look for the crash event itself (after the last time the server was ready)."""
    for event in reversed(list(supervisor.history)):
        payload = event.payload
        if isinstance(payload, StateChanged) and payload.state is State.READY:
            return None  # ready again since any earlier crash: this failure is not that crash
        if isinstance(payload, Crashed) and time.time() - event.time <= within_s:
            return payload.diagnosis
    return supervisor.last_diagnosis if supervisor.state in (State.CRASHED, State.FAILED) else None


def crash_report(supervisor: ChatServer, wait_s: float = CRASH_REPORT_WAIT_S) -> Diagnosis | None:
    """``recent_crash``, but once the server process has exited on its own, wait (at most ``wait_s``) for the
    supervisor's diagnosis of that exit: it is sure to come, and on a busy machine it can take longer than the
    client's own short wait, which would leave a dead server explained as merely "not answering"."""
    diagnosis = recent_crash(supervisor)
    child = supervisor.child
    deadline = time.monotonic() + wait_s
    while diagnosis is None and _exit_being_diagnosed(supervisor, child) and time.monotonic() < deadline:
        time.sleep(0.05)
        diagnosis = recent_crash(supervisor)
    return diagnosis


def _exit_being_diagnosed(supervisor: ChatServer, child: ServerChild | None) -> bool:
    """The supervisor's current child is gone and nobody asked it to go: a crash report follows."""
    return child is not None and supervisor.child is child and not child.running and not child.stop_requested


class SupervisorClient(ChatClient):
    """A client whose API key is the running server's: a start with the key, after one without (the Settings
    step's choice changed), keeps the chat working, as the URL follows a restart on another port."""

    def __init__(self, supervisor: ChatServer, *args: Any, **kwargs: Any):
        self._server = supervisor
        super().__init__(*args, **kwargs)

    @property  # type: ignore[override]
    def api_key(self) -> str | None:
        return running_config(self._server).api_key

    @api_key.setter
    def api_key(self, _value: str | None) -> None:
        """ChatClient sets the key it was given; this one always asks the supervisor."""


def client_for_supervisor(supervisor: ChatServer, **options: Any) -> ChatClient:
    """A client for the supervisor's server; a base model (no chat template) gets text completion."""
    config: LaunchConfig = supervisor.config
    options.setdefault("mode", model_chat_mode(config.model))
    return SupervisorClient(
        supervisor, lambda: supervisor.url, backend=config.backend,
        ctx_per_slot=lambda: ctx_per_slot(running_config(supervisor)),  # follows restarts with other settings
        crash_info=lambda: crash_report(supervisor),
        log_tail=lambda n: [line.text for line in supervisor.tail(n)],
        **options,
    )
