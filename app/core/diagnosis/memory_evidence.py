"""Was memory short when the server was killed? The rule that keeps a kill from being called "out of memory"
without evidence.

A SIGKILL says only that something ended the process at once. What it was is read from three sources:

- the kernel (OomEvidence): its log naming our pid, or its OOM-kill counters (vmstat counts every kernel OOM kill,
  the cgroup's ``oom_kill`` every one in our cgroup) moving while the server ran;
- the server's RSS (RssTrend): at or climbing to the memory limit just before;
- the memory readings taken every half second while it ran (MemorySample): what the system or the server's cgroup,
  whichever is tighter, still had available. User-space OOM killers (systemd-oomd, earlyoom) leave the kernel's
  counters alone, but they act only when memory is nearly gone, which these readings show.

The rule (``judge_kill``):

- SHORT when the kernel named our pid, or counted an OOM kill and its log cannot say whom it killed; or the RSS was
  near the limit; or less than ``LOW_AVAILABLE_FRACTION`` of the limit was available in one of the last readings.
  The kernel's word beats the readings: an allocation can exhaust memory between two readings.
- FINE when not SHORT and something shows it: the last readings had memory available, or the kernel rules its OOM
  killer out (its log is readable and names someone else or no one, or its counters are readable and unchanged).
- UNKNOWN otherwise: no readings of available memory and nothing readable from the kernel (other systems, or a
  server that died before the first reading). Then nobody can say why, and the sentence says so.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from app.core.diagnosis.oom_evidence import OomEvidence
from app.core.diagnosis.rss_trend import RssTrend
from app.core.text import human_bytes

# earlyoom's default threshold; the kernel's own OOM killer acts only when reclaim finds nothing, far lower still
LOW_AVAILABLE_FRACTION = 0.10
RECENT_READINGS = 3  # about the last 1.5 s of a half-second sampler
SHOWN_READINGS = 3


@dataclass(frozen=True)
class MemorySample:
    """One reading while the server ran: its resident memory, and the memory used of the limit that binds it
    (the whole system's, or its memory cgroup's when that one is tighter)."""

    taken_at: float  # time.time()
    rss_bytes: int
    used_bytes: int | None = None
    limit_bytes: int | None = None
    scope: str = "system"  # "system" or "cgroup"

    @property
    def available_bytes(self) -> int | None:
        if self.used_bytes is None or not self.limit_bytes:
            return None
        return max(0, self.limit_bytes - self.used_bytes)

    @property
    def low(self) -> bool:
        available = self.available_bytes
        return available is not None and available < LOW_AVAILABLE_FRACTION * (self.limit_bytes or 0)


class MemoryState(StrEnum):
    SHORT = "short"  # evidence that memory ran out
    FINE = "fine"  # evidence that it did not
    UNKNOWN = "unknown"  # no evidence either way


@dataclass(frozen=True)
class KillEvidence:
    """What decided a kill's cause: the state, the last readings of available memory, and the kernel's word."""

    state: MemoryState
    recent: tuple[MemorySample, ...]  # the last readings with available memory (none: not read)
    kernel_confirmed: bool  # the kernel killed it (or counted a kill its log cannot attribute)
    kernel_ruled_out: bool  # the kernel's OOM killer did not kill it
    rss_near_limit: bool
    lines: tuple[str, ...]  # the evidence as the card shows it

    @property
    def used_bytes(self) -> int | None:
        """The server's RSS just before, as the most of the last readings: one taken while the killed process was
        being torn down reads low."""
        return max(s.rss_bytes for s in self.recent) if self.recent else None

    @property
    def available_bytes(self) -> int | None:
        """The memory available just before, as the least of the last readings."""
        return min(s.available_bytes or 0 for s in self.recent) if self.recent else None

    @property
    def limit_bytes(self) -> int | None:
        return self.recent[-1].limit_bytes if self.recent else None

    @property
    def low(self) -> bool:
        return any(s.low for s in self.recent)


def memory_readings(samples: Iterable[Any]) -> list[MemorySample]:
    """The samples that say how much memory was available (older callers pass bare RSS numbers)."""
    return [s for s in samples if isinstance(s, MemorySample) and s.available_bytes is not None]


def judge_kill(oom: OomEvidence | None, trend: RssTrend | None, samples: Iterable[Any]) -> KillEvidence:
    """The rule in the module docstring."""
    readings = memory_readings(samples)
    recent = readings[-RECENT_READINGS:]
    confirmed = oom is not None and oom.confirmed
    ruled_out = oom is not None and oom.rules_out_kernel_kill
    near = trend is not None and trend.suggests_oom
    if confirmed or near or any(s.low for s in recent):
        state = MemoryState.SHORT
    elif recent or ruled_out:
        state = MemoryState.FINE
    else:
        state = MemoryState.UNKNOWN
    return KillEvidence(state, tuple(recent), confirmed, ruled_out, near, evidence_lines(oom, trend, readings))


def evidence_lines(oom: OomEvidence | None, trend: RssTrend | None, readings: list[MemorySample]) -> tuple[str, ...]:
    """The kernel's lines, the last memory readings, the RSS peak and the kernel's counters."""
    lines = list(oom.kernel_lines) if oom is not None else []
    lines += [reading_line(s) for s in readings[-SHOWN_READINGS:]]
    if not readings:
        lines.append("available memory: not read while it ran")
    if trend is not None:
        limit = f" (limit {human_bytes(trend.limit_bytes)})" if trend.limit_bytes else ""
        lines.append(f"server memory: peak {human_bytes(trend.peak_bytes)}, last {human_bytes(trend.last_bytes)}"
                     + limit)
    lines += kernel_lines(oom)
    return tuple(lines)


def reading_line(sample: MemorySample) -> str:
    clock = time.strftime("%H:%M:%S", time.localtime(sample.taken_at)) + f".{int(sample.taken_at * 10) % 10}"
    return (f"{clock} server {human_bytes(sample.rss_bytes)}; {sample.scope} memory {human_bytes(sample.used_bytes)} "
            f"used of {human_bytes(sample.limit_bytes)}, {human_bytes(sample.available_bytes)} available")


def kernel_lines(oom: OomEvidence | None) -> list[str]:
    if oom is None or not oom.counters_readable:
        counters = "kernel out-of-memory kill counters: not readable"
    else:
        counted = [f"{delta} in its memory cgroup" for delta in (oom.cgroup_delta,) if delta is not None]
        counted += [f"{delta} on the whole system" for delta in (oom.vmstat_delta,) if delta is not None]
        counters = "kernel out-of-memory kills while it ran: " + ", ".join(counted)
    if oom is None or not oom.kernel_log_readable:
        return [counters, "kernel log: not readable"]
    if oom.pid_named:
        return [counters]
    return [counters, "kernel log: no out-of-memory kill of this server"]
