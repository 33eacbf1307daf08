"""diagnose(): exit status + last log lines + OOM evidence -> one Diagnosis with a plain sentence and a fix."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable

from app.core.diagnosis import causes_file, causes_memory, causes_runtime, causes_workers
from app.core.diagnosis.log_facts import read_log_facts
from app.core.diagnosis.oom_evidence import OomEvidence
from app.core.diagnosis.rss_trend import rss_trend
from app.core.diagnosis.signatures import SignatureHit, find_hits
from app.core.diagnosis.situation import Situation
from app.core.diagnosis.value import MAX_EVIDENCE_LINES, Diagnosis, fix_from_dict, trim_evidence
from app.core.hardware.cgroup import memory_limit_bytes
from app.core.process.exit_status import ExitStatus, crash_signal, decode_exit_status

BUILDERS = {**causes_file.BUILDERS, **causes_memory.BUILDERS, **causes_runtime.BUILDERS, **causes_workers.BUILDERS}
# Causes that mean "these settings need more memory than there is" (a probe moves down on these).
MEMORY_CAUSES = frozenset({"gpu_out_of_memory", "context_out_of_memory", "ram_out_of_memory", "mmap_failed",
                           "oom_killed", "killed", "worker_out_of_memory"})

# What a crash amounts to when the log has no better explanation.
_SIGNAL_CAUSES = {
    "SIGSEGV": "crashed", "SIGABRT": "crashed", "SIGFPE": "crashed", "SIGBUS": "bus_error",
    "SIGTERM": "stopped_externally", "SIGINT": "stopped_externally", "SIGHUP": "stopped_externally",
}
_WINDOWS_CAUSES = {
    0xC0000135: "missing_library", 0xC000007B: "library_incompatible", 0xC0000142: "missing_library",
    0xC0000017: "ram_out_of_memory", 0xC000013A: "stopped_externally",
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


def _choose_cause(status: ExitStatus, hit: SignatureHit | None, oom: OomEvidence | None, trend) -> str:
    signal = crash_signal(status)
    if signal == "SIGKILL":
        # Nothing in a log makes a process SIGKILL itself: someone else did, usually the OOM killer.
        memory_pressure = (oom is not None and oom.confirmed) or (trend is not None and trend.suggests_oom)
        return "oom_killed" if memory_pressure else "killed"
    if signal == "SIGILL" or status.exit_code == 0xC000001D:
        return "illegal_instruction"
    if hit is not None:
        return hit.cause
    if oom is not None and oom.pid_named:
        return "oom_killed"
    if status.exit_code in _WINDOWS_CAUSES:
        return _WINDOWS_CAUSES[status.exit_code]
    if signal in _SIGNAL_CAUSES:
        return _SIGNAL_CAUSES[signal]
    if status.exit_code == 127:
        return "missing_library"
    if status.exit_code == 0:
        return "exited_early"
    return "unknown"


def _evidence(lines: list[str], hits: list[SignatureHit], oom: OomEvidence | None, *, tail: int) -> tuple[str, ...]:
    """The deciding line first, then other matched lines and the last log lines in log order."""
    if not hits:  # a kill: the kernel's words explain it, the log shows what the server was doing
        return trim_evidence(list(oom.kernel_lines if oom else ()) + lines[-tail:])
    other = {hit.line for hit in hits[1:6]}
    start = max(0, len(lines) - tail)
    chosen = [line for index, line in enumerate(lines) if index >= start or line.rstrip() in other]
    return trim_evidence([hits[0].line] + chosen[-(MAX_EVIDENCE_LINES - 1):])


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
) -> Diagnosis:
    """Why the server stopped. ``was_ready``: the supervisor knows whether the server ever became ready;
    without it the log is read for signs. ``memory_limit`` (bytes) defaults to the cgroup limit or total RAM.
    ``plan`` (a MemoryPlan for this config) lowers memory fixes to what it estimates fits, and knows the layer count."""
    status = decode_exit_status(returncode)
    lines = as_lines(log_lines)
    hits = find_hits(lines)
    hit = hits[0] if hits else None
    facts = read_log_facts(lines)
    samples = list(rss_samples or ())
    trend = rss_trend(samples, memory_limit or (memory_limit_bytes() if samples else None))
    situation = Situation(
        status=status, config=config, facts=facts, hit=hit, block_count=block_count, oom=oom_evidence,
        trend=trend, was_ready=was_ready if was_ready is not None else facts.was_ready, plan=plan,
    )
    cause = _choose_cause(status, hit, oom_evidence, trend)
    if hit is not None and hit.cause != cause:
        situation = replace(situation, hit=None)  # its groups belong to another cause
    message, next_step, fix, restartable = BUILDERS[cause](situation)
    tail = MAX_EVIDENCE_LINES if cause in ("unknown", "crashed", "exited_early") else 12
    return Diagnosis(
        cause=cause, message=message, next_step=next_step, action=fix_from_dict(fix),
        evidence=_evidence(lines, hits if cause not in ("killed", "oom_killed") else [], oom_evidence, tail=tail),
        exit_code=status.exit_code, signal=status.signal, exit_meaning=status.meaning, restartable=restartable,
    )
