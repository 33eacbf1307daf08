"""The instruction-set probe's answer for this processor, kept so that a diagnosis does not re-run it."""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

from app.core import paths
from app.core.atomic import write_json_atomic
from app.core.bounded_json import read_json
from app.core.engine.cpu_isa import SYSTEM_INFO_NAMES, IsaReport, Verdict, probe

log = logging.getLogger(__name__)


def cpu_fingerprint() -> str:
    """Model name and flags line of /proc/cpuinfo (or the platform's CPU string elsewhere)."""
    import platform

    model, flags = platform.processor(), ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("model name") and not model:
                    model = line
                elif line.startswith(("flags", "Features")):
                    flags = line
                    break
    except OSError:
        pass
    return hashlib.sha256(f"{platform.machine()}\n{model}\n{flags}".encode()).hexdigest()[:16]


def _cache_file() -> Path:
    return paths.cache_dir() / "isa-probe.json"


def current_report(*, refresh: bool = False) -> IsaReport:
    key = cpu_fingerprint()
    try:
        entries = read_json(_cache_file())
    except (OSError, ValueError):
        entries = {}
    if not refresh and isinstance(entries.get(key), dict):
        try:
            return IsaReport.from_dict(entries[key])
        except (ValueError, KeyError, TypeError) as exc:
            log.debug("isa probe cache entry unusable: %s", exc)
    report = probe()
    entries[key] = report.to_dict()
    try:
        write_json_atomic(_cache_file(), entries)
    except OSError as exc:
        log.warning("could not keep the instruction-set probe result: %s", exc)
    return report


def compiled_but_unusable(system_info_flags: tuple[str, ...], report: IsaReport) -> tuple[list[str], list[str]]:
    """Of the features an engine was compiled to use (its system_info line): (advertised here but faulting,
    not even advertised here). Both mean the engine cannot run on this processor."""
    faulting, missing = [], []
    for flag in system_info_flags:
        name = SYSTEM_INFO_NAMES.get(flag)
        verdict = report.verdicts.get(name) if name else None
        if verdict is Verdict.FAULTS:
            faulting.append(name)
        elif verdict is Verdict.NOT_ADVERTISED:
            missing.append(name)
    return faulting, missing
