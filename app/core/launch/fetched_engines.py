"""The GPU engines the app downloaded and checked (app/core/hub/engine_fetch.py), kept in the app's data folder.

``<data>/engines/<folder>/`` holds one unpacked release build; ``<data>/engines/engines.json`` lists the builds that
passed their check (the card listed, a small model generated on it). Only a listed build whose launcher is still
there counts as found; removing one deletes its folder and its entry.
"""

from __future__ import annotations

import logging
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from app.core import paths
from app.core.atomic import write_json_atomic
from app.core.bounded_json import read_json

logger = logging.getLogger(__name__)

REGISTRY_NAME = "engines.json"
VERSION = 1


@dataclass(frozen=True)
class FetchedEngine:
    """One checked build: its kind ("cuda-12"), label ("CUDA 12.4"), release tag, folder, program, the device
    line that showed the card, and when it was checked."""

    kind: str
    label: str
    tag: str
    folder: str
    launcher: str
    device: str
    checked_at: float

    def to_dict(self) -> dict:
        return asdict(self)


def engines_folder() -> Path:
    folder = paths.data_dir() / "engines"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _registry() -> Path:
    return engines_folder() / REGISTRY_NAME


def _read() -> list[FetchedEngine]:
    try:
        data = read_json(_registry())
    except FileNotFoundError:
        return []
    except (OSError, ValueError):
        logger.warning("the list of downloaded engines could not be read; treating it as empty", exc_info=True)
        return []
    entries = data.get("engines") if isinstance(data, dict) else None
    try:
        return [FetchedEngine(**entry) for entry in entries or []]
    except TypeError:
        logger.warning("the list of downloaded engines has entries of another shape; treating it as empty")
        return []


def _write(engines: list[FetchedEngine]) -> None:
    write_json_atomic(_registry(), {"version": VERSION, "engines": [engine.to_dict() for engine in engines]})


def registered_engines() -> list[FetchedEngine]:
    """The checked builds whose program is still there (an antivirus program may have removed one)."""
    return [engine for engine in _read() if Path(engine.launcher).is_file()]


def fetched_launchers() -> list[Path]:
    """Their programs, for the places llama-server is looked for (gpu_servers, discovery)."""
    return [Path(engine.launcher) for engine in registered_engines()]


def register(kind: str, label: str, tag: str, folder: Path, launcher: Path, device: str) -> FetchedEngine:
    """List a checked build (replacing an entry of the same kind)."""
    engine = FetchedEngine(kind, label, tag, str(folder), str(launcher), device, time.time())
    _write([entry for entry in _read() if entry.kind != kind] + [engine])
    return engine


def remove_engine(kind: str | None = None) -> list[FetchedEngine]:
    """Delete the folder and the entry of the build of ``kind`` (every build when None); the removed ones."""
    entries = _read()
    removed = [entry for entry in entries if kind is None or entry.kind == kind]
    _write([entry for entry in entries if entry not in removed])  # the entry goes first: never a listed ghost
    for entry in removed:
        remove_folder(Path(entry.folder))
    return removed


def remove_folder(folder: Path) -> None:
    """Delete an engine folder under the engines folder (nothing outside it, whatever an entry says)."""
    root = engines_folder().resolve()
    try:
        target = folder.resolve()
    except OSError:
        return
    if target == root or root not in target.parents:
        logger.warning("not removing %s: it is not inside %s", folder, root)
        return
    shutil.rmtree(target, ignore_errors=True)
    if target.exists():
        logger.warning("%s could not be removed completely", target)
