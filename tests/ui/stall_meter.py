"""Measures how long the GUI event loop went without turning (a 5 ms timer's longest gap), and how much of that the
GUI thread itself is to blame for.

A gap has two possible reasons: the GUI thread was busy or blocked (a defect), or the whole process was not given a
processor (other programs on a loaded 2-core machine: no defect of ours). A reference thread that only sleeps 5 ms
at a time tells them apart: the operating system does not run it either while the process is starved, but a busy
GUI thread cannot hold it off for long, since Python hands the interpreter lock over every ``sys.getswitchinterval()``
(5 ms) and blocking calls release it. ``worst_ms`` is the raw longest gap; ``worst_own_ms`` is the longest gap less
the part of it in which the reference thread was held off as well.
"""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import QObject, QTimer

REFERENCE_SLEEP_S = 0.005
REFERENCE_LATE_S = 0.02  # a reference wake-up later than this counts as the process being held off


class StallMeter(QObject):
    def __init__(self, interval_ms: int = 5) -> None:
        super().__init__()
        self.worst_ms = 0.0
        self.worst_own_ms = 0.0
        self._last = time.perf_counter()
        self._timer = QTimer(self, interval=interval_ms, timeout=self._tick)
        self._held_off: list[tuple[float, float]] = []  # the reference thread's late stretches (start, end)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._reference_last = time.perf_counter()
        self._reference = threading.Thread(target=self._reference_loop, name="stall-reference", daemon=True)

    def __enter__(self) -> StallMeter:
        self._last = time.perf_counter()
        self._reference.start()
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.stop()
        self._stop.set()
        self._reference.join(timeout=1)

    def _reference_loop(self) -> None:
        self._reference_last = time.perf_counter()
        while not self._stop.is_set():
            time.sleep(REFERENCE_SLEEP_S)
            now = time.perf_counter()
            last, self._reference_last = self._reference_last, now
            if now - last > REFERENCE_LATE_S:
                with self._lock:
                    self._held_off.append((last + REFERENCE_SLEEP_S, now))

    def _excused(self, start: float, end: float) -> float:
        """Seconds of [start, end] in which the reference thread was held off too."""
        with self._lock:
            self._held_off = [(a, b) for a, b in self._held_off if b > start - 1.0]  # older ones are no use
            stretches = list(self._held_off)
        waking = self._reference_last + REFERENCE_SLEEP_S  # held off right now, not woken yet to say so
        if end - waking > REFERENCE_LATE_S:
            stretches.append((waking, end))
        return sum(max(0.0, min(b, end) - max(a, start)) for a, b in stretches)

    def _tick(self) -> None:
        now = time.perf_counter()
        gap = now - self._last
        self.worst_ms = max(self.worst_ms, gap * 1000)
        if gap * 1000 > 50:  # only long gaps are worth the overlap sums
            self.worst_own_ms = max(self.worst_own_ms, (gap - self._excused(self._last, now)) * 1000)
        else:
            self.worst_own_ms = max(self.worst_own_ms, gap * 1000)
        self._last = now
