"""The memory watchdog: while a server runs, memory is read every second; near the limit it warns, at the edge it
restarts the server on purpose — before the kernel's OOM killer ends it without a word (seed 001).

What counts is the tighter of two: the whole system (MemTotal − MemAvailable of /proc/meminfo) and the memory
cgroup the *server* runs in (its usage, less the page cache the kernel would drop, against its limit). Levels have
hysteresis: WARNING at ``warn_fraction``, CRITICAL at ``critical_fraction`` for ``critical_samples`` readings in a
row (one spike is no reason to restart), and back to NORMAL only below ``warn_fraction − clear_margin``.

``MemoryWatchdog(supervisor)`` subscribes to the supervisor: it samples while the server is READY, reports each
level change as a ``memory`` event (the GUI's banner, ``serve --json``) and on CRITICAL asks for a planned restart
(``Supervisor.planned_restart``): counted apart from crashes, with a diagnosis that says it was the watchdog and
what it saw.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.hardware.cgroup import read_cgroup_memory
from app.core.server.events import Event, MemoryLevel, State, StateChanged, VramTaken
from app.core.server.memory_values import Level, MemoryReading, VramGrab
from app.core.text import T, Text, human_bytes

if TYPE_CHECKING:  # the crash decoder's package and psutil load with the first reading, not with the window
    import psutil

    from app.core.diagnosis.memory_evidence import MemorySample

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class WatchdogLimits:
    warn_fraction: float = 0.85
    critical_fraction: float = 0.92
    clear_margin: float = 0.05
    critical_samples: int = 2
    interval_s: float = 1.0


def _tighter_memory(pid: int | None) -> MemoryReading:
    """The tighter of the system's memory and the server's cgroup (its own, read from /proc/PID/cgroup)."""
    import psutil

    memory = psutil.virtual_memory()
    readings = [MemoryReading(memory.total - memory.available, memory.total, "system")]
    cgroup = read_cgroup_memory(f"/proc/{pid}/cgroup") if pid else None
    if cgroup is not None and cgroup.limit_bytes is not None and cgroup.usage_bytes is not None:
        used = max(0, cgroup.usage_bytes - cgroup.reclaimable_bytes)
        readings.append(MemoryReading(used, cgroup.limit_bytes, "cgroup"))
    return max(readings, key=lambda r: r.fraction)


def read_server_memory(pid: int | None) -> MemoryReading:
    """The tighter of the system's memory and the server's cgroup, with the server's RSS."""
    worst = _tighter_memory(pid)
    return MemoryReading(worst.used_bytes, worst.limit_bytes, worst.scope, _rss(pid))


def sample_server_memory(process: psutil.Process) -> MemorySample | None:
    """One reading for the child's sampler (every half second, watchdog or not): its RSS and the memory still
    available, the evidence that tells a kill for lack of memory from one from outside. None for a child that is
    gone but not yet reaped (no resident memory left to read)."""
    rss = process.memory_info().rss
    if rss == 0:
        return None
    memory = _tighter_memory(process.pid)
    from app.core.diagnosis.memory_evidence import MemorySample

    return MemorySample(time.time(), rss, memory.used_bytes, memory.limit_bytes, memory.scope)


def _rss(pid: int | None) -> int | None:
    import psutil

    if not pid:
        return None
    try:
        return psutil.Process(pid).memory_info().rss
    except psutil.Error:
        return None


class LevelTracker:
    """Readings in, level changes out, with the hysteresis described above."""

    def __init__(self, limits: WatchdogLimits) -> None:
        self.limits = limits
        self.level = Level.NORMAL
        self._over_critical = 0

    def step(self, reading: MemoryReading) -> Level | None:
        """The new level when it changed, else None."""
        limits, fraction = self.limits, reading.fraction
        self._over_critical = self._over_critical + 1 if fraction >= limits.critical_fraction else 0
        if self._over_critical >= limits.critical_samples:
            new = Level.CRITICAL
        elif fraction >= limits.warn_fraction:
            new = Level.WARNING
        elif fraction < limits.warn_fraction - limits.clear_margin:
            new = Level.NORMAL
        else:
            new = self.level if self.level is not Level.CRITICAL else Level.WARNING
        if new is self.level:
            return None
        self.level = new
        return new


def level_sentence(level: Level, reading: MemoryReading) -> Text:
    params = {"percent": f"{100 * reading.fraction:.0f}", "used": human_bytes(reading.used_bytes),
              "limit": human_bytes(reading.limit_bytes)}
    if level is Level.CRITICAL:
        return T("Memory use reached {percent} % ({used} of {limit}): the server is restarted now, before the system "
                 "would stop it.",
                 "内存占用已达 {percent}%（{limit} 中的 {used}）：现在重启服务器，以免系统强行终止它。", **params)
    if level is Level.WARNING:
        return T("Memory is running short: {percent} % in use ({used} of {limit}). Long conversations are trimmed "
                 "to keep the server running.", "内存快不够了：已用 {percent}%（{limit} 中的 {used}）。长对话会被裁剪，"
                 "以保持服务器运行。", **params)
    return T("Memory use is back to normal ({percent} %).", "内存占用已恢复正常（{percent}%）。", **params)


GRAB_STEP_BYTES = 512 * 1024 * 1024  # another program's VRAM growth worth a sentence (and each further step)
GPU_EVERY = 3  # GPUs are read every third memory reading


class VramWatch:
    """What other programs hold on each GPU, against the moment the server became ready (``baseline``)."""

    def __init__(self, gpus: list) -> None:
        self.baseline = {gpu.index: gpu.other_processes_bytes for gpu in gpus}
        self.said = dict(self.baseline)  # the level last told, per GPU: a sentence per further step

    def check(self, gpus: list) -> list[VramGrab]:
        grabs = []
        for gpu in gpus:
            held, base = gpu.other_processes_bytes, self.baseline.get(gpu.index, gpu.other_processes_bytes)
            if held - self.said.get(gpu.index, base) >= GRAB_STEP_BYTES:
                self.said[gpu.index] = held
                grabs.append(VramGrab(f"GPU {gpu.index} ({gpu.name})", held - base,
                                      tuple(sorted({p.name for p in gpu.other_processes}))))
        return grabs


def read_other_gpu_use(exclude_pids: tuple[int, ...]) -> list:
    from app.core.hardware.gpu import read_gpus

    return read_gpus(exclude_pids)


class MemoryWatchdog:
    """Samples the supervisor's READY server; ``on_level`` (optional) hears each level change too."""

    def __init__(self, supervisor, limits: WatchdogLimits | None = None, *,
                 read: Callable[[int | None], MemoryReading] = read_server_memory,
                 read_gpus: Callable[[tuple[int, ...]], list] = read_other_gpu_use,
                 on_level: Callable[[Level, MemoryReading], None] | None = None) -> None:
        self.supervisor, self.limits, self.read, self.on_level = supervisor, limits or WatchdogLimits(), read, on_level
        self.read_gpus = read_gpus
        self.vram: VramWatch | None = None
        self.tracker = LevelTracker(self.limits)
        self.last_reading: MemoryReading | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._unsubscribe = supervisor.subscribe(self._on_event)

    @property
    def level(self) -> Level:
        return self.tracker.level

    def _on_event(self, event: Event) -> None:
        if isinstance(event.payload, StateChanged) and event.payload.state is State.READY:
            self._start()

    def _start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self.tracker = LevelTracker(self.limits)
        self._thread = threading.Thread(target=self._run, name="memory-watchdog", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        readings = 0
        self.vram = None
        while not self._stop.wait(self.limits.interval_s):
            supervisor = self.supervisor
            if supervisor.state is not State.READY:
                return  # restarted, crashed or stopped: READY again starts a fresh watch
            try:
                self.check(self.read(supervisor.pid))
                if readings % GPU_EVERY == 0:
                    self.check_gpus(self.read_gpus(tuple(p for p in (supervisor.pid, os.getpid()) if p)))
            except OSError as error:
                logger.info("memory watchdog could not read memory: %s", error)
            readings += 1

    def check_gpus(self, gpus: list) -> list[VramGrab]:
        """GPU memory other programs took since the server became ready, each step said once."""
        if not gpus:
            return []
        if self.vram is None:
            self.vram = VramWatch(gpus)
            return []
        grabs = self.vram.check(gpus)
        for grab in grabs:
            logger.info("memory watchdog: other programs took %d more bytes on %s", grab.grown_bytes, grab.gpu)
            self.supervisor.announce(VramTaken(grab, grab.sentence()))
        return grabs

    def check(self, reading: MemoryReading) -> Level | None:
        """One reading: a level change is announced, and CRITICAL restarts the server."""
        self.last_reading = reading
        level = self.tracker.step(reading)
        if level is None:
            return None
        sentence = level_sentence(level, reading)
        logger.info("memory watchdog: %s at %.1f %% (%s)", level.value, 100 * reading.fraction, reading.scope)
        self.supervisor.announce(MemoryLevel(level, reading, sentence))
        if self.on_level is not None:
            self.on_level(level, reading)
        if level is Level.CRITICAL:
            self._stop.set()
            threading.Thread(target=self.supervisor.planned_restart, args=(sentence, reading.to_dict()),
                             name="watchdog-restart", daemon=True).start()
        return level

    def close(self) -> None:
        self._stop.set()
        self._unsubscribe()
