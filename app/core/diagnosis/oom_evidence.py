"""Linux out-of-memory-killer evidence: OOM-kill counters before/after, and kernel log lines naming the child.

Everything here may be unreadable (containers, macOS, Windows, dmesg_restrict): every reader returns
None / nothing instead of raising. Paths are parameters so tests can point them at temporary files.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from app.core.hardware.cgroup import own_cgroup_events_path

logger = logging.getLogger(__name__)

VMSTAT_PATH = "/proc/vmstat"
KMSG_PATH = "/dev/kmsg"
MAX_KMSG_RECORDS = 50_000

_KILLED = re.compile(r"Killed process (\d+) \(([^)]*)\)(.*)")
_OOM_KILL_TASK = re.compile(r"oom-kill:.*\bpid=(\d+)")
_ANON_RSS = re.compile(r"anon-rss:(\d+)kB")


@dataclass(frozen=True)
class OomCounters:
    vmstat_oom_kill: int | None
    cgroup_oom_kill: int | None
    taken_at: float  # time.time()
    monotonic_at: float | None = None  # time.monotonic(), comparable with kernel log stamps on Linux


@dataclass(frozen=True)
class OomEvidence:
    vmstat_delta: int | None = None  # system-wide OOM kills since the snapshot
    cgroup_delta: int | None = None  # OOM kills in our cgroup (container / systemd slice) since the snapshot
    kernel_lines: tuple[str, ...] = ()  # "Killed process <pid> ..." lines naming our child
    killed_rss_bytes: int | None = None  # anon-rss the kernel reported for our child
    kernel_log_readable: bool = False

    @property
    def pid_named(self) -> bool:
        return bool(self.kernel_lines)

    @property
    def counters_readable(self) -> bool:
        return self.vmstat_delta is not None or self.cgroup_delta is not None

    @property
    def counted_kill(self) -> bool:
        """The kernel's OOM killer ended some process while ours ran (vmstat counts every one, on the whole system)."""
        return bool(self.cgroup_delta) or bool(self.vmstat_delta)

    @property
    def confirmed(self) -> bool:
        """The kernel named our process, or counted an OOM kill while it died and its log cannot say whom it killed.
        A readable log that names another process means the kill was someone else's (another program's own cgroup)."""
        return self.pid_named or (self.counted_kill and not self.kernel_log_readable)

    @property
    def rules_out_kernel_kill(self) -> bool:
        """The kernel's OOM killer did not end our process: its log is readable and does not name it (it names
        every victim), or its counters are readable and did not move."""
        if self.pid_named:
            return False
        return self.kernel_log_readable or (self.counters_readable and not self.counted_kill)


def read_counter(path: str | os.PathLike[str], key: str) -> int | None:
    """The integer after ``key`` in a "key value" per line file (/proc/vmstat, memory.events)."""
    try:
        text = Path(path).read_text()
    except OSError:  # no such counter here (macOS, Windows, no cgroup): the evidence goes without it
        logger.debug("counter file %s unreadable", path, exc_info=True)
        return None
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == key and parts[1].isdigit():
            return int(parts[1])
    return None


def snapshot_oom_counters(*, vmstat_path: str = VMSTAT_PATH, cgroup_events_path: str | None = None) -> OomCounters:
    """Take before starting the child; pass to oom_evidence_since after it dies."""
    events = cgroup_events_path or own_cgroup_events_path()
    return OomCounters(
        vmstat_oom_kill=read_counter(vmstat_path, "oom_kill"),
        cgroup_oom_kill=read_counter(events, "oom_kill") if events else None,
        taken_at=time.time(),
        monotonic_at=time.monotonic(),
    )


def _delta(before: int | None, after: int | None) -> int | None:
    if before is None or after is None:
        return None
    return max(0, after - before)


def read_kmsg(path: str = KMSG_PATH, limit: int = MAX_KMSG_RECORDS) -> list[str] | None:
    """All records currently in the kernel ring buffer, without blocking; None when not readable."""
    nonblocking = getattr(os, "O_NONBLOCK", None)  # absent on Windows, where there is no kernel log to read
    if nonblocking is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | nonblocking)
    except OSError as error:  # dmesg_restrict, containers: the kernel log is often closed to us
        logger.debug("kernel log %s unreadable: %s", path, error)
        return None
    records: list[str] = []
    try:
        for _ in range(limit):
            try:
                chunk = os.read(fd, 8192)
            except OSError as exc:
                if exc.errno == errno.EPIPE:
                    continue  # a record was overwritten while reading: skip it
                break  # EAGAIN: end of buffer; EINVAL/EPERM: unreadable
            if not chunk:
                break
            records.extend(chunk.decode("utf-8", "replace").splitlines())
    finally:
        os.close(fd)
    return [_kmsg_as_dmesg(line) for line in records]


def _kmsg_as_dmesg(record: str) -> str:
    """'6,1234,758333878,-;message' -> '[  758.333878] message', the format dmesg prints."""
    head, sep, message = record.partition(";")
    fields = head.split(",")
    if not sep or len(fields) < 3 or not fields[2].isdigit():
        return record
    return f"[{int(fields[2]) / 1e6:12.6f}] {message}"


_STAMP = re.compile(r"^\[\s*(\d+\.\d+)\]")
# Kernel timestamps and time.monotonic() both count from boot on Linux, but not exactly alike.
_CLOCK_SLACK_S = 5.0


def lines_since(kernel_lines: Iterable[str], since_monotonic: float | None) -> list[str]:
    """Kernel lines stamped after ``since_monotonic`` (unstamped lines are kept):
    an old kill of a reused pid is not ours."""
    kept = []
    for line in kernel_lines:
        stamp = _STAMP.match(line)
        if since_monotonic is None or stamp is None or float(stamp.group(1)) >= since_monotonic - _CLOCK_SLACK_S:
            kept.append(line)
    return kept


def read_dmesg(timeout_s: float = 2.0) -> list[str] | None:
    try:
        result = subprocess.run(["dmesg"], capture_output=True, text=True, timeout=timeout_s)
    except (OSError, subprocess.SubprocessError) as error:
        logger.debug("dmesg did not run: %s", error)
        return None
    return result.stdout.splitlines() if result.returncode == 0 else None


def kill_lines_for(pid: int | None, kernel_lines: Iterable[str]) -> tuple[list[str], int | None]:
    """Kernel lines that name ``pid`` as killed for lack of memory, and the anon-rss they report."""
    found: list[str] = []
    rss: int | None = None
    for line in kernel_lines:
        match = _KILLED.search(line)
        task = _OOM_KILL_TASK.search(line)
        named = (match and int(match.group(1)) == pid) or (task and int(task.group(1)) == pid)
        if pid is not None and named:
            found.append(line.strip())
            anon = _ANON_RSS.search(line)
            if anon:
                rss = int(anon.group(1)) * 1024
    return found, rss


def oom_evidence_since(
    before: OomCounters | None,
    pid: int | None,
    *,
    vmstat_path: str = VMSTAT_PATH,
    cgroup_events_path: str | None = None,
    kernel_lines: Iterable[str] | None = None,
    kmsg_path: str = KMSG_PATH,
    use_dmesg: bool = True,
) -> OomEvidence:
    """Compare counters with ``before`` and look for the kernel naming ``pid``; ``kernel_lines`` overrides reading."""
    events = cgroup_events_path or own_cgroup_events_path()
    vm_after = read_counter(vmstat_path, "oom_kill")
    cg_after = read_counter(events, "oom_kill") if events else None
    if kernel_lines is None:
        kernel_lines = read_kmsg(kmsg_path)
        if kernel_lines is None and use_dmesg:
            kernel_lines = read_dmesg()
    readable = kernel_lines is not None
    recent = lines_since(kernel_lines or (), before.monotonic_at if before else None)
    found, rss = kill_lines_for(pid, recent)
    found.sort(key=lambda line: "Killed process" not in line)  # the readable line first
    return OomEvidence(
        vmstat_delta=_delta(before.vmstat_oom_kill if before else None, vm_after),
        cgroup_delta=_delta(before.cgroup_oom_kill if before else None, cg_after),
        kernel_lines=tuple(found[-3:]),
        killed_rss_bytes=rss,
        kernel_log_readable=readable,
    )
