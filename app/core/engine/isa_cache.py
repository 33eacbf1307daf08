"""The instruction-set probe's answer for this processor, kept so that a diagnosis does not re-run it."""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from app.core import paths
from app.core.atomic import write_json_atomic
from app.core.bounded_json import read_json

if TYPE_CHECKING:  # the probe's module loads when a report is read: the engine check's cache needs only the key
    from app.core.engine.cpu_isa import IsaReport

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
    from app.core.engine.cpu_isa import IsaReport, probe

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


def unusable_extensions(report: IsaReport) -> tuple[dict[str, str], dict[str, str]]:
    """For each ggml system_info flag of an extension this processor cannot run, the extension's name: (advertised
    here but faulting, not even advertised here). What a diagnosis of an illegal instruction is given."""
    from app.core.engine.cpu_isa import SYSTEM_INFO_NAMES, Verdict, label

    faulting, missing = {}, {}
    for flag, name in SYSTEM_INFO_NAMES.items():
        verdict = report.verdicts.get(name)
        if verdict is Verdict.FAULTS:
            faulting[flag] = label(name)
        elif verdict is Verdict.NOT_ADVERTISED:
            missing[flag] = label(name)
    return faulting, missing
