"""What a download shows while it runs: the sentence in both languages, the speed over the last seconds (a stall
shows soon), the time left, and reports no more often than the window can use."""

from __future__ import annotations

from app.core.hub.download_progress import REPORT_EVERY_S, DownloadProgress, Meter, duration

MiB = 1 << 20


def test_sentence_in_both_languages():
    p = DownloadProgress(int(1.2 * 1024 * MiB), int(4.9 * 1024 * MiB), 2, 3, 12.3 * MiB, 300.0)
    assert p.sentence().render("en") == "1.2 GiB of 4.9 GiB · part 2 of 3 · 12.3 MiB/s · about 5 min left"
    assert p.sentence().render("zh") == "1.2 GiB / 4.9 GiB · 第 2/3 个分卷 · 12.3 MiB/秒 · 约剩 5 分钟"
    assert DownloadProgress(0, 10, 1, 1, None, None).sentence().render("en") == "0 B of 10 B"


def test_durations():
    assert [duration(s).render("en") for s in (0.4, 45, 300, 4000)] == ["0 s", "45 s", "5 min", "1 h 6 min"]
    assert duration(4000).render("zh") == "1 小时 6 分钟"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_speed_is_measured_over_the_last_seconds_and_gives_the_time_left():
    clock, seen = Clock(), []
    meter = Meter(100 * MiB, 1, seen.append, clock=clock)
    meter.add_existing(10 * MiB)  # a kept partial: done, but not part of the speed
    meter.report(force=True)
    assert seen[-1].done_bytes == 10 * MiB and seen[-1].bytes_per_s is None  # nothing measured yet
    clock.now += 3  # hashing the kept partial again: no speed shown (not "0 B/s"), and none counted later
    meter.report(force=True)
    assert seen[-1].bytes_per_s is None
    for _ in range(10):  # 1 MiB/s for 10 s
        clock.now += 1
        meter.received(MiB)
    assert seen[-1].bytes_per_s == MiB and seen[-1].seconds_left == 80
    for _ in range(10):  # a stall: the speed falls within the window
        clock.now += 1
        meter.report()
    assert seen[-1].bytes_per_s is not None and seen[-1].bytes_per_s < 0.3 * MiB


def test_reports_are_throttled():
    clock, seen = Clock(), []
    meter = Meter(MiB, 1, seen.append, clock=clock)
    for _ in range(100):
        clock.now += REPORT_EVERY_S / 10
        meter.received(1000)
    assert 9 <= len(seen) <= 11
