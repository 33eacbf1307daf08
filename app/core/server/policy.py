"""When to restart a crashed server: back-off between attempts and the crash-loop guard."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable

DEFAULT_BACKOFF_S = (0.5, 1.0, 2.0)
# why a crash was not followed by a restart: the FAILED state's "reason"
AUTO_RESTART_OFF, NOT_RESTARTABLE, CRASH_LOOP = "auto_restart_off", "not_restartable", "crash_loop"


class CrashPolicy:
    """Counts crashes in a sliding window; N crashes within it means a loop that restarting will not fix."""

    def __init__(self, *, auto_restart: bool = True, max_crashes: int = 3, window_s: float = 60.0,
                 backoff_s: Iterable[float] = DEFAULT_BACKOFF_S):
        self.auto_restart = auto_restart
        self.max_crashes = max_crashes
        self.window_s = window_s
        self.backoff_s = tuple(backoff_s) or DEFAULT_BACKOFF_S
        self._crashes: deque[float] = deque()

    def record_crash(self, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        self._crashes.append(now)
        while self._crashes and now - self._crashes[0] > self.window_s:
            self._crashes.popleft()

    @property
    def recent_crashes(self) -> int:
        return len(self._crashes)

    def reason_not_to_restart(self, restartable: bool) -> str | None:
        """None = restart; else AUTO_RESTART_OFF | NOT_RESTARTABLE | CRASH_LOOP (shown as the FAILED reason)."""
        if not self.auto_restart:
            return AUTO_RESTART_OFF
        if not restartable:
            return NOT_RESTARTABLE
        if self.recent_crashes >= self.max_crashes:
            return CRASH_LOOP
        return None

    def next_delay(self) -> float:
        """0.5 s after the first crash in the window, then 1 s, then 2 s ..."""
        return self.backoff_s[min(max(self.recent_crashes, 1), len(self.backoff_s)) - 1]

    def reset(self) -> None:
        self._crashes.clear()
