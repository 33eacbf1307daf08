"""diagnose(): exit status + last log lines + OOM evidence + memory readings -> one Diagnosis with a plain sentence
and a fix. A kill is called "out of memory" only with memory evidence (app/core/diagnosis/memory_evidence.py)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from app.core.diagnosis import (
    causes_file,
    causes_kill,
    causes_memory,
    causes_runtime,
    causes_windows,
    causes_workers,
    cuda_causes,
)
from app.core.diagnosis.log_facts import read_log_facts
from app.core.diagnosis.memory_evidence import KillEvidence, MemoryState, judge_kill, memory_readings
from app.core.diagnosis.oom_evidence import OomEvidence
from app.core.diagnosis.rss_trend import rss_trend
from app.core.diagnosis.signatures import SignatureHit, find_hits
from app.core.diagnosis.situation import EngineFacts, Situation
from app.core.diagnosis.value import MAX_EVIDENCE_LINES, Diagnosis, fix_from_dict, trim_evidence
from app.core.hardware.cgroup import memory_limit_bytes
from app.core.process.exit_status import ExitStatus, crash_signal, decode_exit_status
from app.core.text import T

BUILDERS = {**causes_file.BUILDERS, **causes_memory.BUILDERS, **causes_kill.BUILDERS, **causes_runtime.BUILDERS,
            **causes_workers.BUILDERS, **causes_windows.BUILDERS, **cuda_causes.BUILDERS}
# Causes that mean "these settings need more memory than there is" (a probe moves down on these).
MEMORY_CAUSES = frozenset({"gpu_out_of_memory", "context_out_of_memory", "ram_out_of_memory", "mmap_failed",
                           "oom_killed", "worker_out_of_memory"})
KILL_CAUSES = {MemoryState.SHORT: "oom_killed", MemoryState.FINE: "killed_from_outside", MemoryState.UNKNOWN: "killed"}

# What a crash amounts to when the log has no better explanation.
_SIGNAL_CAUSES = {
    "SIGSEGV": "crashed", "SIGABRT": "crashed", "SIGFPE": "crashed", "SIGBUS": "bus_error",
    "SIGTERM": "stopped_externally", "SIGINT": "stopped_externally", "SIGHUP": "stopped_externally",
}
_WINDOWS_CAUSES = {
    0xC0000135: "missing_library", 0xC000007B: "library_incompatible", 0xC0000142: "missing_library",
    0xC0000017: "ram_out_of_memory", 0xC000013A: "stopped_externally",
    0xC0000139: "dll_version", 0xC0E90002: "app_control_blocked",
}


def log_text(line: Any) -> str:
    """A log entry as text: plain strings, bytes, or objects with .text (the supervisor's LogLine)."""
    if isinstance(line, bytes):
        return line.decode("utf-8", "replace")
    text = getattr(line, "text", line)
    return text if isinstance(text, str) else str(text)


def as_lines(log_lines: Iterable[Any] | str | bytes | None) -> list[str]:
    """Log entries as plain lines: one text blob, a list of lines, or LogLine objects; ``\r`` splits too."""
    if log_lines is None:
        return []
    if isinstance(log_lines, (str, bytes)):
        log_lines = [log_lines]
    lines: list[str] = []
    for entry in log_lines:
        lines.extend(log_text(entry).splitlines() or [""])
    return lines


def _choose_cause(status: ExitStatus, hit: SignatureHit | None, oom: OomEvidence | None,
                  kill: KillEvidence | None) -> str:
    signal = crash_signal(status)
    if signal == "SIGKILL" and kill is not None:
        # Nothing in a log makes a process SIGKILL itself: someone else did, and only the evidence says who.
        return KILL_CAUSES[kill.state]
    if _illegal_instruction(status):
        return "illegal_instruction"
    if hit is not None:
        return hit.cause
    if oom is not None and oom.pid_named:
        return "oom_killed"
    if status.exit_code in _WINDOWS_CAUSES:
        return _WINDOWS_CAUSES[status.exit_code]
    if signal in _SIGNAL_CAUSES:
        return _SIGNAL_CAUSES[signal]
    if status.exit_code == 0:
        return "exited_early"
    return "unknown"


def _illegal_instruction(status: ExitStatus) -> bool:
    return crash_signal(status) == "SIGILL" or status.exit_code == 0xC000001D


def is_illegal_instruction(returncode: int | float | str | None) -> bool:
    """The process died on an instruction its processor cannot run: its diagnosis needs ``EngineFacts``."""
    return _illegal_instruction(decode_exit_status(returncode))


def _evidence(lines: list[str], hits: list[SignatureHit], *, tail: int) -> tuple[str, ...]:
    """The deciding line first, then other matched lines and the last log lines in log order."""
    if not hits:
        return trim_evidence(lines[-tail:])
    other = {hit.line for hit in hits[1:6]}
    start = max(0, len(lines) - tail)
    chosen = [line for index, line in enumerate(lines) if index >= start or line.rstrip() in other]
    return trim_evidence([hits[0].line] + chosen[-(MAX_EVIDENCE_LINES - 1):])


# exit codes whose plain meaning is a guess at what fails at start-up (exit_meanings.EXIT_MEANINGS)
_START_UP_GUESSES = (1, 2, 3, 126, 127)


def _after_ready(status: ExitStatus, was_ready: bool | None) -> ExitStatus:
    """A server that was serving had been found and run, loaded its model, opened its port and accepted its options:
    the start-up guess of its exit code's meaning would contradict that evidence."""
    if was_ready and status.signal is None and status.exit_code in _START_UP_GUESSES:
        return status._replace(meaning=T("The server exited with error code {code} after it had started serving.",
                                         "服务器在开始服务之后以错误码 {code} 退出。", code=status.exit_code))
    return status


def _limit_of(samples: list[Any]) -> int | None:
    """The limit the readings were taken against (the tighter of system and cgroup), else this process's own."""
    readings = memory_readings(samples)
    if readings:
        return readings[-1].limit_bytes
    return memory_limit_bytes() if samples else None


def diagnose(
    returncode: int | float | str | None,
    log_lines: Iterable[Any],
    config: Any = None,
    *,
    oom_evidence: OomEvidence | None = None,
    rss_samples: Iterable[Any] = (),
    block_count: int | None = None,
    was_ready: bool | None = None,
    memory_limit: int | None = None,
    plan: Any = None,
    engine: EngineFacts | None = None,
) -> Diagnosis:
    """Why the server stopped. ``was_ready``: the supervisor knows whether the server ever became ready;
    without it the log is read for signs. ``memory_limit`` (bytes) defaults to the cgroup limit or total RAM.
    ``plan`` (a MemoryPlan for this config) lowers memory fixes to what it estimates fits, and knows the layer count.
    ``rss_samples``: the supervisor's MemorySample readings (RSS and available memory), or bare RSS numbers.
    ``engine``: what the caller knows of the engine build and the processor, for an illegal instruction (the
    decoder reads the log and these values only: it imports no engine module and runs no probe)."""
    lines = as_lines(log_lines)
    hits = find_hits(lines)
    hit = hits[0] if hits else None
    facts = read_log_facts(lines)
    was_ready = was_ready if was_ready is not None else facts.was_ready
    status = _after_ready(decode_exit_status(returncode), was_ready)
    samples = list(rss_samples or ())
    trend = rss_trend(samples, memory_limit or _limit_of(samples))
    kill = judge_kill(oom_evidence, trend, samples) if crash_signal(status) == "SIGKILL" else None
    situation = Situation(
        status=status, config=config, facts=facts, hit=hit, block_count=block_count, oom=oom_evidence,
        trend=trend, was_ready=was_ready, plan=plan, kill=kill, engine=engine or EngineFacts(),
    )
    cause = _choose_cause(status, hit, oom_evidence, kill)
    if hit is not None and hit.cause != cause:
        situation = replace(situation, hit=None)  # its groups belong to another cause
    cause = causes_windows.refined_cause(cause, situation)  # a missing DLL the engine folder names
    message, next_step, fix, restartable = BUILDERS[cause](situation)
    tail = MAX_EVIDENCE_LINES if cause in ("unknown", "crashed", "exited_early") else 12
    # a kill's evidence is the memory's (the readings, the kernel's counters and lines), not what the log last said
    evidence = trim_evidence(kill.lines) if kill is not None else _evidence(lines, hits, tail=tail)
    return Diagnosis(
        cause=cause, message=message, next_step=next_step, action=fix_from_dict(fix), evidence=evidence,
        exit_code=status.exit_code, signal=status.signal, exit_meaning=status.meaning, restartable=restartable,
    )
