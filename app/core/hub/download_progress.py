"""What a download reports while it runs (bytes, speed, time left) and how it stops when the user asks (pause keeps
the partial file, cancel removes it)."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from app.core.text import T, Text, human_bytes

SPEED_WINDOW_S = 5.0  # the speed is measured over the last few seconds, so a stall shows soon
MIN_SPEED_SPAN_S = 0.5  # no speed before this much time has been measured
REPORT_EVERY_S = 0.2  # at most this often to on_progress (and always at a part's start and end)


class StopReason(StrEnum):
    PAUSE = "pause"
    CANCEL = "cancel"


@dataclass(frozen=True)
class DownloadProgress:
    done_bytes: int  # of the whole model (every part), including what an earlier, paused download kept
    total_bytes: int
    part: int  # 1-based
    parts: int
    bytes_per_s: float | None  # None until enough has been measured
    seconds_left: float | None

    @property
    def fraction(self) -> float:
        return self.done_bytes / self.total_bytes if self.total_bytes else 1.0

    def sentence(self) -> Text:
        """"1.2 GiB of 4.9 GiB · 12.3 MiB/s · about 5 min left" (and "part 2 of 3" for a split model)."""
        pieces_en = [f"{human_bytes(self.done_bytes)} of {human_bytes(self.total_bytes)}"]
        pieces_zh = [f"{human_bytes(self.done_bytes)} / {human_bytes(self.total_bytes)}"]
        if self.parts > 1:
            pieces_en.append(f"part {self.part} of {self.parts}")
            pieces_zh.append(f"第 {self.part}/{self.parts} 个分卷")
        if self.bytes_per_s is not None:
            pieces_en.append(f"{human_bytes(self.bytes_per_s)}/s")
            pieces_zh.append(f"{human_bytes(self.bytes_per_s)}/秒")
        if self.seconds_left is not None:
            left = duration(self.seconds_left)
            pieces_en.append(f"about {left.render('en')} left")
            pieces_zh.append(f"约剩 {left.render('zh')}")
        return T("{text}", "{text_zh}", text=" · ".join(pieces_en), text_zh=" · ".join(pieces_zh))


def duration(seconds: float) -> Text:
    """45 -> "45 s", 300 -> "5 min", 4000 -> "1 h 7 min"."""
    s = max(0, round(seconds))
    if s < 60:
        return T("{n} s", "{n} 秒", n=s)
    if s < 3600:
        return T("{n} min", "{n} 分钟", n=round(s / 60))
    return T("{h} h {m} min", "{h} 小时 {m} 分钟", h=s // 3600, m=s % 3600 // 60)


class DownloadStopped(Exception):
    """The user paused (the partial files are kept: the next download continues from them) or cancelled (they are
    removed). ``done_bytes`` of ``total_bytes`` were on disk when it stopped."""

    def __init__(self, reason: StopReason, done_bytes: int = 0, total_bytes: int = 0) -> None:
        super().__init__(reason.value)
        self.reason = reason
        self.done_bytes = done_bytes
        self.total_bytes = total_bytes


class Meter:
    """The running totals of one download call and the throttled reports to ``on_progress``."""

    def __init__(self, total: int, parts: int, on_progress: Callable[[DownloadProgress], None],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.parts, self.part = total, parts, 1
        self.done = 0
        self._on_progress = on_progress
        self._clock = clock
        self._samples: deque[tuple[float, int]] = deque()
        self._received = 0  # bytes that came over the network in this call (the speed's measure)
        self._last_report = float("-inf")

    def add_existing(self, n: int) -> None:
        """Bytes already on disk (a finished part, a kept partial) count as done but not towards the speed."""
        self.done += n

    def received(self, n: int) -> None:
        if not self._received:
            self._samples.clear()  # the speed starts with the first bytes, not with the re-hash of a partial
        self.done += n
        self._received += n
        self.report()

    def rewind(self, n: int) -> None:
        """A partial that had to be dropped: its bytes are no longer done."""
        self.done -= n

    def speed(self) -> float | None:
        now = self._clock()
        self._samples.append((now, self._received))
        while len(self._samples) > 2 and now - self._samples[1][0] >= SPEED_WINDOW_S:
            self._samples.popleft()
        then, received = self._samples[0]
        span = now - then
        return (self._received - received) / span if span >= MIN_SPEED_SPAN_S else None

    def snapshot(self) -> DownloadProgress:
        speed = self.speed() if self._received else None
        left = max(0, self.total - self.done)
        seconds = left / speed if speed else None
        return DownloadProgress(self.done, self.total, self.part, self.parts, speed, seconds)

    def report(self, force: bool = False) -> None:
        now = self._clock()
        if force or now - self._last_report >= REPORT_EVERY_S:
            self._last_report = now
            self._on_progress(self.snapshot())
