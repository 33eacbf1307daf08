"""One model on its way to a server: the checked file, its launch config, the memory plan and the probe result.

The window's steps share one :class:`ModelSession` instead of handing dicts to each other: the Model step opens
and checks a file, the model's profile fills ``config``, the Settings step shows it and writes each edit back (the
one copy of the current config), plans it and stores the plan and the engine it looked up for the command line;
"Find safe settings" runs with that engine and plan (``backend_for``, ``plan_config``) and stores its result; the
Server step starts ``session.config`` with the same engine. Opening another model resets the plan, the backend and
the probe, so nothing measured for the last model answers for the new one. The window tells its steps about the
session in one fixed order (``app/ui/shell/session_owner.py``).

Also here, because the window and the command line must agree on them: the first-run context size
(:func:`first_run_ctx`) and how a saved launch config is read back (:func:`launch_config_for`).

A session is owned by one thread (the GUI's); workers get values from it and hand their results back.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.launch.config import LaunchConfig
from app.core.problem import Check
from app.core.settings import Field, conform

if TYPE_CHECKING:  # the types only: importing a session stays cheap at start-up
    from app.core.gguf.model_info import ModelInfo
    from app.core.launch.backends import BackendInfo
    from app.core.plan.memory import MemoryPlan
    from app.core.plan.projector import FoundProjector
    from app.core.probe.result import ProbeResult

Engine = tuple[str, str | None]  # (backend, server_bin), as :meth:`app.core.settings.Settings.engine_for` gives it
FIRST_RUN_CTX = 4096  # tokens: enough for a chat, small enough for most machines


def first_run_ctx(info: ModelInfo | None, *, context_is_searched: bool = False) -> int:
    """The context a model gets before anyone chose one: the window, ``plan``, ``probe`` and ``serve`` all ask here.

    4096 tokens, never more than the model was trained for (an unknown training length counts as 4096).
    ``context_is_searched``: with no GPU to plan for, ``plan`` and ``probe`` look for the most context that fits
    (context is the knob there, not layers), so they start from the whole training length.
    """
    trained = int(info.context_length or 0) if info is not None else 0
    trained = trained or FIRST_RUN_CTX
    return trained if context_is_searched else min(FIRST_RUN_CTX, trained)


def _kinds(hint: Any) -> tuple[type, ...]:
    """The types a saved value of a field annotated ``hint`` may have (JSON keeps tuples as lists)."""
    options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    kinds: list[type] = []
    for option in options:
        origin = typing.get_origin(option) or option
        kinds += [list, tuple] if origin in (list, tuple) else [origin]
    return tuple(kinds)


def _launch_schema(defaults: LaunchConfig) -> tuple[Field, ...]:
    hints = typing.get_type_hints(LaunchConfig)
    return tuple(Field(f.name, getattr(defaults, f.name), _kinds(hints[f.name]))
                 for f in fields(LaunchConfig) if f.name != "model")


def launch_config_for(path: str, info: ModelInfo | None, stored: dict | None) -> LaunchConfig:
    """The model's saved launch settings over safe first-time defaults.

    Read like the rest of the settings file (:func:`app.core.settings.conform`): a value of the wrong type (a
    hand-edited file) falls back to the default instead of crashing; the saved ``model`` never replaces ``path``.
    """
    defaults = LaunchConfig(model=path, ctx=first_run_ctx(info))
    schema = _launch_schema(defaults)
    saved = conform({k: v for k, v in (stored or {}).items() if k != "model"}, schema)
    return defaults.with_changes(**{f.name: saved[f.name] for f in schema})


def with_engine(config: LaunchConfig, engine: tuple[str, str | None] | None) -> LaunchConfig:
    """``config`` with this engine (backend, server_bin); unchanged for None."""
    if engine is None:
        return config
    backend, server_bin = engine
    return config.with_changes(backend=backend, server_bin=server_bin)


@dataclass
class CheckedModel:
    """A validation report tied to the path it is about (the report itself does not say)."""

    path: str
    info: ModelInfo | None
    checks: list[Check] = field(default_factory=list)
    projector: str | None = None  # a vision projector (mmproj) found next to the model

    @property
    def usable(self) -> bool:
        """Read and without an error row: the model can get settings and a server."""
        return self.info is not None and not any(c.is_error for c in self.checks)


def check_model(path: str | Path, expected_sha256: str | None = None, compute_sha256: bool = False,
                progress: Callable | None = None, cancel: Callable | None = None,
                backend: str | None = None) -> CheckedModel:
    """Every check on one file (a worker call: it reads the file, and hashes it when asked).

    ``backend``: the engine the model will run with (the live session's, :attr:`ModelSession.engine`); a projector
    found next to the model is judged for it. None (a caller without a session): the saved settings' engine."""
    from app.core.gguf.validate import validate

    report = validate(path, expected_sha256=expected_sha256, compute_sha256=compute_sha256,
                      progress=progress, cancel=cancel)
    checked = CheckedModel(str(path), report.info, list(report.checks))
    if checked.usable:
        found = _projector_next_to(str(path), backend)
        if found is not None:
            checked.checks.append(found.check())
            checked.projector = found.path
    return checked


def _projector_next_to(path: str, backend: str | None) -> FoundProjector | None:
    """The vision projector beside the model, judged for ``backend`` (a worker call)."""
    from app.core.plan.projector import found_projector

    if backend is None:
        from app.core.settings import load_settings

        backend, _server_bin = load_settings().engine_for(path)
    return found_projector(path, backend)


def same_path(a: str | Path, b: str | Path) -> bool:
    from app.core.settings import profile_key

    return profile_key(a) == profile_key(b)


class ModelSession:
    """The one model the window works on (see the module doc). Every field is None until its step got there."""

    def __init__(self, engine_for: Callable[[str], Engine] | None = None) -> None:
        """``engine_for(path)``: the engine a model runs with, from the live settings (the window's, not the file on
        disk, which is written a moment after each change); without it the model's checks read the saved one."""
        self.generation = 0  # +1 per opened model: a worker's answer for an older one is dropped
        self._engine_for = engine_for
        self._clear(None)

    def _clear(self, path: str | None) -> None:
        self.path: str | None = path
        self.engine: Engine | None = None  # the opened model's engine when it was opened (engine_for)
        self.checked: CheckedModel | None = None
        self.config: LaunchConfig | None = None
        self.plan: MemoryPlan | None = None
        self.plan_config: LaunchConfig | None = None  # the config ``plan`` was made for
        self.backend: BackendInfo | None = None  # the engine resolved for ``config`` (command line, probe)
        self.probe: ProbeResult | None = None  # the last "Find safe settings" of this session
        self.saved_probe: ProbeResult | None = None  # the one the model's profile remembered

    # --- the Model step ----------------------------------------------------------------------------

    def open(self, path: str | Path) -> int:
        """Another model (or the same one again): forget everything about the last one."""
        self.generation += 1
        self._clear(str(path))
        if self._engine_for is not None:
            self.engine = self._engine_for(str(path))
        return self.generation

    def set_checked(self, checked: CheckedModel) -> bool:
        """Take a file's checks; False (and nothing changes) for an older file's late answer."""
        if self.path is None or checked.path != self.path:
            return False
        self.checked = checked
        if not checked.usable:
            self.config = self.plan = self.plan_config = self.backend = self.probe = self.saved_probe = None
        return True

    @property
    def info(self) -> ModelInfo | None:
        return self.checked.info if self.checked is not None else None

    @property
    def usable(self) -> bool:
        return self.checked is not None and self.checked.usable

    # --- the Settings step -------------------------------------------------------------------------

    def use_profile(self, stored_config: dict | None, saved_probe: dict | None,
                    engine: tuple[str, str | None] | None = None) -> LaunchConfig | None:
        """The checked model's settings from its profile (or first-run defaults); None when it is not usable.

        ``saved_probe`` is the profile's stored probe result (``ProbeResult.to_dict()``); it is read back here,
        once, so the steps hold a ``ProbeResult``. ``engine`` is (backend, server_bin) as the settings give it for
        this model (:meth:`app.core.settings.Settings.engine_for`): it wins over the engine the saved config names.
        """
        if not self.usable or self.path is None:
            return None
        config = with_engine(launch_config_for(self.path, self.info, stored_config), engine)
        projector = self.checked.projector if self.checked is not None else None
        if config.mmproj is None and projector is not None:
            config = config.with_changes(mmproj=projector)  # found next to the model: llama-server can load it
        self.config = config
        self.saved_probe = _probe_result(saved_probe)
        return self.config

    def set_config(self, config: LaunchConfig | None) -> None:
        self.config = config

    def set_plan(self, plan: MemoryPlan | None, config: LaunchConfig) -> None:
        self.plan, self.plan_config = plan, config

    def set_backend(self, backend: BackendInfo | None) -> None:
        self.backend = backend

    def backend_for(self, config: LaunchConfig) -> BackendInfo | None:
        """The backend already resolved for this engine choice, if any (a changed choice needs a new look)."""
        backend = self.backend
        if backend is None or backend.kind != config.backend:
            return None
        if config.server_bin and backend.path and not same_path(backend.path, config.server_bin):
            return None
        return backend

    # --- the probe ---------------------------------------------------------------------------------

    def set_probe(self, result: ProbeResult | None) -> None:
        """The probe's answer for this session's model (None while a new run measures)."""
        self.probe = result

    def is_for(self, path: str | Path | None) -> bool:
        """True when ``path`` is the session's model (a supervisor built for another model is not)."""
        return path is not None and self.path is not None and same_path(path, self.path)


# --- the server follows the model: what opening another model does to a running server ---------------------

SWITCH_RESTART, SWITCH_STOP, SWITCH_KEEP = "restart", "stop", "keep"  # the user's answer to the switch question


def ask_before_switch(server_model: str | None, server_running: bool, opened: str | Path) -> bool:
    """True when opening ``opened`` must ask what to do with the server: one runs (or starts) another model."""
    return server_running and server_model is not None and not same_path(server_model, opened)


def switch_action(choice: str, opened_usable: bool | None) -> str | None:
    """What the server does now for the user's ``choice`` (``SWITCH_*``); ``opened_usable`` is None while the
    opened model's checks still run. Restart waits for them (None: nothing yet), then restarts with the new model,
    or stops the old server when the new one cannot run (the user asked not to keep it). Stop stops at once;
    Keep keeps it running."""
    if choice == SWITCH_STOP:
        return SWITCH_STOP
    if choice == SWITCH_RESTART:
        if opened_usable is None:
            return None
        return SWITCH_RESTART if opened_usable else SWITCH_STOP
    return SWITCH_KEEP


def _probe_result(stored: dict | None) -> ProbeResult | None:
    if not isinstance(stored, dict) or not stored:
        return None
    from app.core.probe.result import ProbeResult  # here: the probe's modules are not needed to open a window

    return ProbeResult.from_dict(stored)
