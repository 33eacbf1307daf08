"""Measures how long the GUI event loop went without turning (a 5 ms timer's longest gap)."""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer


class StallMeter(QObject):
    def __init__(self, interval_ms: int = 5) -> None:
        super().__init__()
        self.worst_ms = 0.0
        self._last = time.perf_counter()
        self._timer = QTimer(self, interval=interval_ms, timeout=self._tick)

    def __enter__(self) -> "StallMeter":
        self._last = time.perf_counter()
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.stop()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.worst_ms = max(self.worst_ms, (now - self._last) * 1000)
        self._last = now
