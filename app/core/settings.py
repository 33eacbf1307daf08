"""The app's remembered choices: language, window geometry, recent models, the engine and a profile per model.

The engine (built-in or llama-server, and the llama-server file) is one app-wide choice: every model gets it,
except a model the user gave its own engine ("only for this model", its profile's ``engine``). Until the user
chooses one, the engine is automatic (stored as None): llama-server, or the built-in engine when llama-server cannot
run here (:func:`app.core.launch.engine_choice.automatic_engine`). A choice is remembered when the user makes it, and
when a server reaches Ready with an engine other than the one the settings gave it (:meth:`Settings.engine_worked`).

Stored as one JSON file under ``config_dir()``, written atomically. The schema is declarative
(:data:`SCHEMA`) with a ``version``; older files are upgraded by :data:`MIGRATIONS`. A file that
cannot be read is kept aside as ``settings.json.corrupt-<timestamp>`` and replaced by defaults,
with a :class:`Text` notice the UI shows once.
"""

from __future__ import annotations

import copy
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.bounded_json import UnreadableJson, read_json
from app.core.paths import config_dir
from app.core.text import SUPPORTED_LANGUAGES, T, Text

logger = logging.getLogger(__name__)

SETTINGS_FILE = "settings.json"
SCHEMA_VERSION = 3
MAX_RECENT_MODELS = 10
ZOOM_MIN, ZOOM_MAX = 50, 300  # percent; a stored zoom outside is brought back inside


@dataclass(frozen=True)
class Field:
    name: str
    default: Any
    kinds: tuple[type, ...]


SCHEMA: tuple[Field, ...] = (
    Field("language", None, (str, type(None))),  # None = follow the system locale
    Field("last_model", None, (str, type(None))),
    Field("recent_models", [], (list,)),
    Field("window_geometry", None, (str, type(None))),  # base64 of QWidget.saveGeometry()
    Field("window_state", None, (str, type(None))),  # base64 of splitter/dock state
    Field("profiles", {}, (dict,)),  # model path -> profile (see PROFILE_SCHEMA)
    Field("backend", None, (str, type(None))),  # the app-wide engine; None = automatic (llama-server when it runs)
    Field("server_bin", None, (str, type(None))),  # the app-wide llama-server file; None = found automatically
    # Folders the user added to "On this computer" (app.core.library). A new field with a default needs no
    # migration: an older file simply gets the empty list.
    Field("model_folders", [], (list,)),
    Field("zoom_percent", 100, (int,)),  # the window's font scale (Ctrl +/-), ZOOM_MIN..ZOOM_MAX; no migration
    # Where "Get a model" searches and downloads: "hf", "hf-mirror" or "modelscope" (app.core.hub.source.HubSource's
    # values). The user's Hub token is never stored here: it stays in memory for one session. No migration needed.
    Field("hub_source", "hf", (str,)),
    # A proxy for every Hub/mirror/ModelScope request ("http://host:port"), where the system's (HTTP(S)_PROXY) is
    # not picked up; None = the system's. It may carry a password: the app never writes it into a log. No migration.
    Field("hub_proxy", None, (str, type(None))),
)

PROFILE_SCHEMA: tuple[Field, ...] = (
    Field("launch_config", None, (dict, type(None))),  # LaunchConfig.to_dict() of the last launch
    Field("probe", None, (dict, type(None))),  # ProbeResult.to_dict() of the last "Find safe settings"
    Field("expected_sha256", None, (str, type(None))),
    Field("updated", None, (float, int, type(None))),
    Field("engine", None, (dict, type(None))),  # {"backend", "server_bin"}: only when set for this model alone
)


def _migrate_0_to_1(data: dict[str, Any]) -> dict[str, Any]:
    """Version 0 (the first prototype, no ``version`` key) called the recent list ``recent``."""
    if "recent" in data and "recent_models" not in data:
        data["recent_models"] = data.pop("recent")
    return data


def _updated(profile: dict[str, Any]) -> float:
    """When a version-1 profile was saved (0 when it does not say)."""
    value = profile.get("updated")
    return value if isinstance(value, (int, float)) else 0


def _migrate_1_to_2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 kept the engine in each model's launch config only: the one used last becomes the app-wide
    choice (no model gets an override: version 1 could not tell a chosen engine from the default one)."""
    profiles = data.get("profiles")
    configs = [p for p in profiles.values() if isinstance(p, dict) and isinstance(p.get("launch_config"), dict)] \
        if isinstance(profiles, dict) else []
    if configs and "backend" not in data:
        latest = max(configs, key=_updated)
        backend, server_bin = _engine_values(latest["launch_config"])
        data["backend"], data["server_bin"] = backend, server_bin
    return data


def _migrate_2_to_3(data: dict[str, Any]) -> dict[str, Any]:
    """llama-server became the default engine (issue 23). Version 2 wrote the app-wide engine both when the user
    chose one and whenever a server reached Ready, so a stored built-in engine is nearly always the old default that
    merely worked, and cannot be told apart from a deliberate pick: it becomes automatic (llama-server, or the
    built-in engine when llama-server cannot run here). A stored llama-server was never a default: it was chosen,
    and is kept with its file. A model's own engine ("only for this model") was always a deliberate pick: kept."""
    from app.core.launch.config import BACKEND_EMBEDDED

    if data.get("backend") == BACKEND_EMBEDDED:
        data["backend"] = None
    return data


# MIGRATIONS[n] upgrades a version-n dict to version n+1; add one entry per schema change.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    0: _migrate_0_to_1, 1: _migrate_1_to_2, 2: _migrate_2_to_3}


def _engine_values(stored: Any) -> tuple[str, str | None]:
    """(backend, server_bin) read from a dict, like the rest of the file: a missing or unknown engine is the
    automatic one (llama-server when it runs here, else the built-in one)."""
    from app.core.launch.config import BACKENDS
    from app.core.launch.engine_choice import automatic_engine

    stored = stored if isinstance(stored, dict) else {}
    backend = stored.get("backend")
    server_bin = stored.get("server_bin")
    server_bin = server_bin if isinstance(server_bin, str) and server_bin.strip() else None
    return backend if backend in BACKENDS else automatic_engine(server_bin).backend, server_bin


def defaults() -> dict[str, Any]:
    data = {f.name: copy.deepcopy(f.default) for f in SCHEMA}
    data["version"] = SCHEMA_VERSION
    return data


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    version = data.get("version", 0)
    if not isinstance(version, int) or version < 0:
        version = 0
    while version < SCHEMA_VERSION:
        data = MIGRATIONS[version](data)
        version += 1
    data["version"] = max(version, SCHEMA_VERSION)
    return data


def conform(data: dict[str, Any], schema: tuple[Field, ...]) -> dict[str, Any]:
    """Keep known fields of the right type, fill the rest with defaults; unknown keys are kept.

    A bool is no int here (``True`` for a count falls back to the default); the launch config a model's profile
    stores is read the same way (:func:`app.core.session.launch_config_for`)."""
    result = dict(data)
    for f in schema:
        value = data.get(f.name, f.default)
        if not isinstance(value, f.kinds) or isinstance(value, bool) and bool not in f.kinds:
            value = f.default
        result[f.name] = copy.deepcopy(value)
    return result


def _normalise(data: dict[str, Any]) -> dict[str, Any]:
    data = conform(migrate(data), SCHEMA)
    if data["language"] not in (None, *SUPPORTED_LANGUAGES):
        data["language"] = None
    data["recent_models"] = [p for p in data["recent_models"] if isinstance(p, str)][:MAX_RECENT_MODELS]
    data["zoom_percent"] = min(max(data["zoom_percent"], ZOOM_MIN), ZOOM_MAX)
    data["model_folders"] = [p for p in data["model_folders"] if isinstance(p, str) and p.strip()]
    data["profiles"] = {
        key: conform(value, PROFILE_SCHEMA)
        for key, value in data["profiles"].items()
        if isinstance(key, str) and isinstance(value, dict)
    }
    return data


def profile_key(model_path: str | Path) -> str:
    """An absolute, normalised path; computed without touching the disk (the GUI calls this on every edit)."""
    return os.path.abspath(os.path.expanduser(str(model_path)))


@dataclass
class Settings:
    """Loaded settings. Mutate through the methods, then :meth:`save` (the UI saves on change)."""

    path: Path
    data: dict[str, Any] = field(default_factory=defaults)
    notice: Text | None = None  # set when the file was corrupt and replaced by defaults

    @property
    def language(self) -> str | None:
        return self.data["language"]

    @language.setter
    def language(self, lang: str | None) -> None:
        if lang not in (None, *SUPPORTED_LANGUAGES):
            raise ValueError(f"unsupported language {lang!r}")
        self.data["language"] = lang

    @property
    def recent_models(self) -> list[str]:
        return list(self.data["recent_models"])

    @property
    def last_model(self) -> str | None:
        return self.data["last_model"]

    @property
    def zoom_percent(self) -> int:
        return self.data["zoom_percent"]

    @zoom_percent.setter
    def zoom_percent(self, percent: int) -> None:
        self.data["zoom_percent"] = min(max(int(percent), ZOOM_MIN), ZOOM_MAX)

    def remember_model(self, model_path: str | Path) -> None:
        """Make this model the last one and put it first in the recent list."""
        key = profile_key(model_path)
        recent = [key] + [p for p in self.data["recent_models"] if p != key]
        self.data["recent_models"] = recent[:MAX_RECENT_MODELS]
        self.data["last_model"] = key

    def forget_model(self, model_path: str | Path) -> None:
        key = profile_key(model_path)
        self.data["recent_models"] = [p for p in self.data["recent_models"] if p != key]
        if self.data["last_model"] == key:
            self.data["last_model"] = None

    def profile(self, model_path: str | Path) -> dict[str, Any]:
        """A copy of the model's profile (defaults when the model was never opened)."""
        stored = self.data["profiles"].get(profile_key(model_path), {})
        return conform(stored, PROFILE_SCHEMA)

    def update_profile(self, model_path: str | Path, **changes: Any) -> dict[str, Any]:
        unknown = set(changes) - {f.name for f in PROFILE_SCHEMA}
        if unknown:
            raise KeyError(f"unknown profile fields: {sorted(unknown)}")
        profile = self.profile(model_path)
        profile.update(changes)
        profile["updated"] = time.time()
        self.data["profiles"][profile_key(model_path)] = conform(profile, PROFILE_SCHEMA)
        return profile

    @property
    def model_folders(self) -> list[str]:
        """Folders the user added to the models found on this computer."""
        return list(self.data["model_folders"])

    def add_model_folder(self, folder: str | Path) -> bool:
        """Add a folder (once); True when it was new."""
        folder = str(folder)
        if not folder.strip() or folder in self.data["model_folders"]:
            return False
        self.data["model_folders"] = [*self.data["model_folders"], folder]
        return True

    def remove_model_folder(self, folder: str | Path) -> None:
        self.data["model_folders"] = [f for f in self.data["model_folders"] if f != str(folder)]

    # --- the engine: app-wide, a model's own only when the user set one for it -----------------------

    @property
    def engine(self) -> tuple[str, str | None]:
        """The app-wide (backend, server_bin)."""
        return _engine_values({"backend": self.data["backend"], "server_bin": self.data["server_bin"]})

    def engine_override(self, model_path: str | Path) -> tuple[str, str | None] | None:
        """The model's own engine, or None when it follows the app-wide choice."""
        stored = self.profile(model_path)["engine"]
        return _engine_values(stored) if stored else None

    def engine_for(self, model_path: str | Path) -> tuple[str, str | None]:
        """The engine this model starts with: its own when it has one, else the app-wide choice."""
        return self.engine_override(model_path) or self.engine

    def set_engine(self, backend: str, server_bin: str | None, model_path: str | Path | None = None, *,
                   only_this_model: bool = False) -> None:
        """The user chose an engine: the app-wide one (``model_path``'s own is dropped), or only this model's."""
        backend, server_bin = _engine_values({"backend": backend, "server_bin": server_bin})
        if only_this_model:
            if model_path is None:
                raise ValueError("only_this_model needs a model")
            self.update_profile(model_path, engine={"backend": backend, "server_bin": server_bin})
            return
        self.data["backend"], self.data["server_bin"] = backend, server_bin
        if model_path is not None and self.engine_override(model_path) is not None:
            self.update_profile(model_path, engine=None)

    def engine_is_automatic(self, model_path: str | Path | None = None) -> bool:
        """Nobody chose this model's engine (nor the app-wide one): it follows :func:`automatic_engine`."""
        if model_path is not None and self.engine_override(model_path) is not None:
            return False
        return self.data["backend"] is None

    def engine_fallback_reason(self, model_path: str | Path | None = None) -> Text | None:
        """The one sentence saying why the built-in engine runs instead of llama-server, when the engine is
        automatic and llama-server cannot run here; None otherwise."""
        from app.core.launch.engine_choice import automatic_engine

        if not self.engine_is_automatic(model_path):
            return None
        return automatic_engine(self.engine[1]).reason

    def engine_worked(self, model_path: str | Path, backend: str, server_bin: str | None) -> bool:
        """A server reached Ready with this engine: remember it (as the model's own when it has one, else as the
        app-wide choice) when it is not the engine the settings gave it, so an automatic engine stays automatic
        (and follows llama-server when it can run here again). True when something changed."""
        override = self.engine_override(model_path) is not None
        before = self.engine_for(model_path)
        if (backend, server_bin) == before:
            return False
        self.set_engine(backend, server_bin, model_path, only_this_model=override)
        return self.engine_for(model_path) != before

    def get(self, name: str) -> Any:
        return copy.deepcopy(self.data[name])

    def set(self, name: str, value: Any) -> None:
        spec = next((f for f in SCHEMA if f.name == name), None)
        if spec is None or not isinstance(value, spec.kinds):
            raise KeyError(f"{name!r} is not a setting of type {spec.kinds if spec else '?'}")
        self.data[name] = copy.deepcopy(value)

    def save(self) -> None:
        from app.core.atomic import write_json_atomic  # tempfile & co. only when writing: faster start-up

        write_json_atomic(self.path, self.data)


def settings_path() -> Path:
    return config_dir() / SETTINGS_FILE


def _set_aside(path: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while backup.exists():
        backup = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
        n += 1
    path.replace(backup)
    return backup


def load_settings(path: str | Path | None = None) -> Settings:
    """Read the settings file; never raises for a missing or damaged file. Only a regular file of bounded size and
    nesting is read (:mod:`app.core.bounded_json`): a FIFO, a device or a huge or deeply nested file is set aside."""
    path = Path(path) if path is not None else settings_path()
    if not os.path.lexists(path):
        return Settings(path=path)
    try:
        raw = read_json(path)
        if not isinstance(raw, dict):
            raise ValueError("top level is not an object")
        return Settings(path=path, data=_normalise(raw))
    except (OSError, ValueError) as exc:
        logger.warning("settings file %s unreadable (%s); setting it aside, defaults are used", path,
                       type(exc).__name__)  # not the text: it may hold an API key
        backup = _set_aside(path)
        settings = Settings(path=path, notice=_set_aside_notice(exc, backup))
        settings.save()
        return settings


def _set_aside_notice(exc: Exception, backup: Path) -> Text:
    if isinstance(exc, OSError):  # the system's words ("Permission denied"), never the exception's class name
        return T("Your settings file could not be read ({error}); it was kept as {backup} and defaults are used.",
                 "无法读取设置文件（{error}）；原文件已保存为 {backup}，现使用默认设置。",
                 error=exc.strerror or "?", backup=backup.name)
    reason = exc.reason if isinstance(exc, UnreadableJson) else T("it is damaged", "文件已损坏")
    return Text("Your settings file could not be read ({reason}); it was kept as {backup} and defaults are used."
                .replace("{reason}", reason.render("en")),
                "无法读取设置文件（{reason}）；原文件已保存为 {backup}，现使用默认设置。"
                .replace("{reason}", reason.render("zh")),
                {"backup": backup.name})
