"""The GPU engines the app downloaded and checked (app/core/hub/engine_fetch.py), kept in the app's data folder.

``<data>/engines/<folder>/`` holds one unpacked release build; ``<data>/engines/engines.json`` lists the builds that
passed their check (the card listed, a small model generated on it). Only a listed build whose launcher is still
there counts as found; removing one deletes its folder and its entry.

The list is read as untrusted: an entry of another shape (a missing field, a number where a path goes) is skipped on
its own, and one whose folder is not inside ``<data>/engines/`` or whose program is not inside its folder (links
resolved) is never offered, so a list written by something else cannot make the app run a program from elsewhere.
"""

from __future__ import annotations

import logging
import shutil
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from app.core import paths
from app.core.atomic import write_json_atomic
from app.core.bounded_json import read_json
from app.core.problem import UserError
from app.core.text import T

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
    except (OSError, ValueError, RecursionError):
        logger.warning("the list of downloaded engines could not be read; treating it as empty", exc_info=True)
        return []
    entries = data.get("engines") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        logger.warning("the list of downloaded engines has no list of engines; treating it as empty")
        return []
    found = [engine for engine in map(_entry, entries) if engine is not None]
    if len(found) < len(entries):
        logger.warning("%d entries of the list of downloaded engines have another shape; skipped",
                       len(entries) - len(found))
    return found


def _entry(item: Any) -> FetchedEngine | None:
    """The engine an entry describes, or None when a field is missing or of another type."""
    names = [field.name for field in fields(FetchedEngine)]
    if not isinstance(item, dict) or any(name not in item for name in names):
        return None
    values = {name: item[name] for name in names}
    checked_at = values.pop("checked_at")
    if not all(isinstance(value, str) and "\0" not in value for value in values.values()):
        return None
    if not isinstance(checked_at, (int, float)) or isinstance(checked_at, bool):
        return None
    return FetchedEngine(**values, checked_at=float(checked_at))


def _in_place(engine: FetchedEngine, root: Path) -> bool:
    """Whether the entry's folder lies inside the engines folder and its program inside that folder (links
    resolved) and is a file."""
    try:
        folder, launcher = Path(engine.folder).resolve(), Path(engine.launcher).resolve()
        return root in folder.parents and folder in launcher.parents and launcher.is_file()
    except (OSError, ValueError, RuntimeError):  # RuntimeError: a link loop (Python before 3.13)
        return False


def os_detail(error: OSError) -> str:
    """"Not a directory: /path" (the system's words and the path), else the error's text."""
    if error.strerror and error.filename:
        return f"{error.strerror}: {error.filename}"
    return error.strerror or str(error) or type(error).__name__


def _write(engines: list[FetchedEngine]) -> None:
    write_json_atomic(_registry(), {"version": VERSION, "engines": [engine.to_dict() for engine in engines]})


def registered_engines() -> list[FetchedEngine]:
    """The checked builds whose program is still there (an antivirus program may have removed one), inside their
    folder inside the engines folder; none when the data folder cannot be used."""
    try:
        root = engines_folder().resolve()
    except OSError:
        logger.warning("the engines folder cannot be used; no downloaded engine is offered", exc_info=True)
        return []
    engines = _read()
    kept = [engine for engine in engines if _in_place(engine, root)]
    for engine in engines:
        if engine not in kept and Path(engine.folder).exists():
            logger.warning("not offering %s: its program is not a file inside its folder inside %s", engine.launcher,
                           root)
    return kept


def fetched_launchers() -> list[Path]:
    """Their programs, for the places llama-server is looked for (gpu_servers, discovery)."""
    return [Path(engine.launcher) for engine in registered_engines()]


def register(kind: str, label: str, tag: str, folder: Path, launcher: Path, device: str) -> FetchedEngine:
    """List a checked build (replacing an entry of the same kind)."""
    engine = FetchedEngine(kind, label, tag, str(folder), str(launcher), device, time.time())
    _write([entry for entry in _read() if entry.kind != kind] + [engine])
    return engine


def remove_engine(kind: str | None = None) -> list[FetchedEngine]:
    """Delete the folder and the entry of the build of ``kind`` (every build when None); the removed ones.
    UserError when the list cannot be written (then nothing was deleted)."""
    try:
        entries = _read()
        removed = [entry for entry in entries if kind is None or entry.kind == kind]
        if removed:
            _write([entry for entry in entries if entry not in removed])  # the entry goes first: never a listed ghost
    except OSError as error:
        raise UserError(T("The list of downloaded GPU builds cannot be changed ({detail}), so nothing was removed.",
                          "无法修改已下载显卡版本的列表（{detail}），因此没有删除任何内容。", detail=os_detail(error)),
                        T("Check that the app's data folder can be written, then try again.",
                          "请检查应用的数据文件夹是否可写，然后重试。")) from error
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
