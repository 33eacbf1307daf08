"""How many answers a shared server runs at once, and a fair guess at when the next slot frees (Retry-After)."""

from __future__ import annotations

import math
import threading
import time
from collections import deque

DEFAULT_RETRY_S, MAX_RETRY_S = 5, 120


class RequestLimit:
    """How many answers run now; a guess at when one of them ends (the Retry-After)."""

    def __init__(self, max_active: int):
        self.max_active = max(1, int(max_active))
        self._lock = threading.Lock()
        self._started: dict[int, float] = {}
        self._durations: deque[float] = deque(maxlen=20)
        self._next = 0
        self.refused = 0

    def try_enter(self) -> int | None:
        """A ticket, or None when every slot is taken."""
        with self._lock:
            if len(self._started) >= self.max_active:
                self.refused += 1
                return None
            self._next += 1
            self._started[self._next] = time.monotonic()
            return self._next

    def leave(self, ticket: int) -> None:
        with self._lock:
            started = self._started.pop(ticket, None)
            if started is not None:
                self._durations.append(time.monotonic() - started)

    @property
    def active(self) -> int:
        return len(self._started)

    def retry_after_s(self) -> int:
        """Seconds until the oldest running answer is likely done: the mean of recent answers minus its age."""
        with self._lock:
            if not self._durations or not self._started:
                return DEFAULT_RETRY_S
            mean = sum(self._durations) / len(self._durations)
            age = time.monotonic() - min(self._started.values())
        return int(min(MAX_RETRY_S, max(1, math.ceil(mean - age))))
