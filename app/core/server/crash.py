"""Glue between a dead (or never ready, or never started) child and the crash decoder in app.core.diagnosis."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import Any

from app.core.diagnosis import (
    Diagnosis,
    EngineFacts,
    OomCounters,
    diagnose,
    diagnose_start_failure,
    diagnose_timeout,
    is_illegal_instruction,
    oom_evidence_since,
    snapshot_oom_counters,
)
from app.core.text import T, Text

logger = logging.getLogger(__name__)

LOG_LINES_FOR_DIAGNOSIS = 200


def oom_snapshot() -> OomCounters | None:
    try:
        return snapshot_oom_counters()
    except Exception:  # evidence is optional; an unreadable /proc must never stop a start
        logger.warning("OOM counters unreadable before a start; a crash will be diagnosed without them", exc_info=True)
        return None


def block_count(model: str) -> int | None:
    try:
        from app.core.gguf.reader import read_model_info

        return read_model_info(model).block_count
    except Exception:  # a file that cannot be read is the diagnosis' business, not ours
        logger.debug("layer count of %s unreadable", model, exc_info=True)
        return None


def engine_facts(returncode: int | float | str | None, program: str | None = None) -> EngineFacts | None:
    """What the diagnosis of an illegal instruction needs, gathered here so that the decoder runs no probe: whether
    the set-up built the built-in engine, and which extensions this processor cannot run (the instruction-set
    probe's kept answer; the probe runs once when there is none); for any exit, the program that ran (``program``,
    its argv[0]: a Windows loader failure looks beside it for what is missing). None when there is nothing to say."""
    if not is_illegal_instruction(returncode):
        return EngineFacts(program=program) if program else None
    from app.core.engine import build_record, isa_cache

    built_here = build_record.for_engine("embedded") is not None
    try:
        faulting, missing = isa_cache.unusable_extensions(isa_cache.current_report())
    except OSError as exc:  # the probe could not run: the diagnosis falls back to the general sentence
        logger.warning("instruction-set probe unavailable for the diagnosis: %s", exc)
        faulting, missing = {}, {}
    return EngineFacts(built_here, faulting, missing, program)


def diagnose_exit(returncode: int, log_lines: list[str], config: Any, *, pid: int, before: OomCounters | None,
                  rss_samples: list, block_count: int | None = None, was_ready: bool | None = None,
                  program: str | None = None) -> Diagnosis:
    """Decode an unexpected exit. Kernel OOM evidence is read only when a kill signal makes it plausible.
    ``rss_samples``: the child's readings (MemorySample: its RSS and the memory still available), oldest first."""
    oom = None
    if returncode in (-9, 137):
        try:
            oom = oom_evidence_since(before, pid, use_dmesg=False)
        except Exception:  # evidence is optional: the diagnosis reads the log and the exit code without it
            logger.warning("OOM evidence unreadable after pid %s died", pid, exc_info=True)
            oom = None
    return diagnose(returncode, log_lines[-LOG_LINES_FOR_DIAGNOSIS:], config, oom_evidence=oom,
                    rss_samples=tuple(rss_samples), block_count=block_count, was_ready=was_ready,
                    engine=engine_facts(returncode, program))


def readiness_timeout(limit_s: float, seen: str, log_lines: list[str], config: Any) -> Diagnosis:
    """Never ready in time: the decoder's sentence plus what the readiness check itself saw."""
    diagnosis = diagnose_timeout(limit_s, log_lines[-LOG_LINES_FOR_DIAGNOSIS:], config)
    return dataclasses.replace(diagnosis, evidence=diagnosis.evidence + (f"readiness check: {seen}",))


def start_failed(error: BaseException, argv: Sequence[str] | None, config: Any) -> Diagnosis:
    return diagnose_start_failure(error, list(argv or ()), config)


def watchdog_restart(reason: Text, facts: dict[str, Any], smaller: tuple[int, int] | None = None) -> Diagnosis:
    """The memory watchdog restarted the server on purpose: what it saw, and what lowers the risk next time
    (``smaller``: the context was halved, (old, new), because it happened again soon)."""
    evidence = tuple(f"{key}: {value}" for key, value in facts.items())
    if smaller is not None:
        step = T("It happened again within ten minutes, so the server now runs with less context ({old} → {new} "
                 "tokens). The chat is kept.", "十分钟内再次发生，所以服务器现在使用更小的上下文（{old} → {new} "
                 "个词元）。对话已保留。", old=smaller[0], new=smaller[1])
    else:
        step = T("The chat is kept. If this happens often, use a smaller context or close other programs.",
                 "对话已保留。如果经常发生，请使用更小的上下文，或关闭其他程序。")
    return Diagnosis("memory_watchdog", reason, step, evidence=evidence,
                     exit_meaning=T("restarted by the memory watchdog", "被内存看门狗重启"))
