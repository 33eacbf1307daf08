"""Glue between a dead (or never ready, or never started) child and the crash decoder in app.core.diagnosis."""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from app.core.diagnosis import (
    Diagnosis,
    OomCounters,
    diagnose,
    diagnose_start_failure,
    diagnose_timeout,
    oom_evidence_since,
    snapshot_oom_counters,
)

LOG_LINES_FOR_DIAGNOSIS = 200


def oom_snapshot() -> OomCounters | None:
    try:
        return snapshot_oom_counters()
    except Exception:  # evidence is optional; an unreadable /proc must never stop a start
        return None


def block_count(model: str) -> int | None:
    try:
        from app.core.gguf import read_model_info

        return read_model_info(model).block_count
    except Exception:  # a file that cannot be read is the diagnosis' business, not ours
        return None


def diagnose_exit(returncode: int, log_lines: list[str], config: Any, *, pid: int, before: OomCounters | None,
                  rss_samples: list, block_count: int | None = None, was_ready: bool | None = None) -> Diagnosis:
    """Decode an unexpected exit. Kernel OOM evidence is read only when a kill signal makes it plausible."""
    oom = None
    if returncode in (-9, 137):
        try:
            oom = oom_evidence_since(before, pid, use_dmesg=False)
        except Exception:
            oom = None
    return diagnose(returncode, log_lines[-LOG_LINES_FOR_DIAGNOSIS:], config, oom_evidence=oom,
                    rss_samples=tuple(rss_samples), block_count=block_count, was_ready=was_ready)


def readiness_timeout(limit_s: float, seen: str, log_lines: list[str], config: Any) -> Diagnosis:
    """Never ready in time: the decoder's sentence plus what the readiness check itself saw."""
    diagnosis = diagnose_timeout(limit_s, log_lines[-LOG_LINES_FOR_DIAGNOSIS:], config)
    return dataclasses.replace(diagnosis, evidence=diagnosis.evidence + (f"readiness check: {seen}",))


def start_failed(error: BaseException, argv: Sequence[str] | None, config: Any) -> Diagnosis:
    return diagnose_start_failure(error, list(argv or ()), config)
