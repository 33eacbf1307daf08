"""Peak memory of a server child while an attempt runs: RSS (with its children) and VRAM (NVML)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import psutil

logger = logging.getLogger(__name__)

SAMPLE_INTERVAL_S = 0.1  # the final VmHWM reading catches the true RSS peak; polling is for VRAM and children


def _process_tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root] + root.children(recursive=True)
    except psutil.Error:  # the child is gone: nothing to sample
        logger.debug("process tree of pid %s unreadable", pid, exc_info=True)
        return []


def tree_rss_bytes(pid: int) -> int:
    total = 0
    for proc in _process_tree(pid):
        try:
            total += proc.memory_info().rss
        except psutil.Error:  # one process of the tree exited meanwhile
            logger.debug("RSS of pid %s unreadable", proc.pid, exc_info=True)
    return total


def _high_water_mark(pid: int) -> int:
    """Linux VmHWM: the true peak resident size of one process (0 where not available)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):  # no /proc (macOS, Windows) or the process exited
        logger.debug("VmHWM of pid %s unreadable", pid, exc_info=True)
    return 0


def tree_high_water_mark(pid: int) -> int:
    return sum(_high_water_mark(p.pid) for p in _process_tree(pid))


class PeakSampler:
    """Polls a pid (set later, once the child exists) on a thread and keeps the peaks."""

    def __init__(self, pid_source: Callable[[], int | None],
                 vram_reader: Callable[[int], int | None] | None = None) -> None:
        self._pid_source = pid_source
        self._vram_reader = vram_reader
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="probe-sampler", daemon=True)
        self.peak_rss_bytes = 0
        self.peak_vram_bytes: int | None = None

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def sample_now(self, thorough: bool = True) -> None:
        """``thorough``: include children and the kernel's high-water marks (a /proc scan, ~2 ms)."""
        pid = self._pid_source()
        if not pid:
            return
        if thorough:
            self.peak_rss_bytes = max(self.peak_rss_bytes, tree_rss_bytes(pid), tree_high_water_mark(pid))
        else:
            try:
                self.peak_rss_bytes = max(self.peak_rss_bytes, psutil.Process(pid).memory_info().rss)
            except psutil.Error:  # the child exited between two samples
                logger.debug("RSS of pid %s unreadable", pid, exc_info=True)
        if self._vram_reader is not None:
            vram = self._vram_reader(pid)
            if vram is not None:
                self.peak_vram_bytes = max(self.peak_vram_bytes or 0, vram)

    def _loop(self) -> None:
        count = 0
        while not self._stop.wait(SAMPLE_INTERVAL_S):
            count += 1
            self.sample_now(thorough=count % 10 == 0)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=1.0)
