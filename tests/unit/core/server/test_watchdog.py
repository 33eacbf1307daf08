"""The watchdog's levels (hysteresis, one spike is no restart) and its reading of this machine's memory."""

from __future__ import annotations

import os

import pytest

from app.core.server.watchdog import (
    Level,
    LevelTracker,
    MemoryReading,
    WatchdogLimits,
    level_sentence,
    read_server_memory,
)

MiB = 1024 * 1024


def _reading(percent: float) -> MemoryReading:
    return MemoryReading(int(percent * 10 * MiB), 1000 * MiB, "system")


def _levels(percents: list[float], **limits) -> list[Level | None]:
    tracker = LevelTracker(WatchdogLimits(**limits))
    return [tracker.step(_reading(p)) for p in percents]


def test_warning_then_critical_after_two_readings_over_the_edge():
    assert _levels([50, 86, 90, 93, 94]) == [None, Level.WARNING, None, None, Level.CRITICAL]


def test_one_spike_over_the_edge_is_no_restart():
    assert _levels([93, 80, 93, 70]) == [Level.WARNING, None, None, Level.NORMAL]


def test_back_to_normal_only_below_the_margin():
    assert _levels([86, 82, 81, 79.9, 86]) == [Level.WARNING, None, None, Level.NORMAL, Level.WARNING]


def test_limits_are_settings():
    assert _levels([70, 75], warn_fraction=0.7, critical_fraction=0.74, critical_samples=1) == \
        [Level.WARNING, Level.CRITICAL]


@pytest.mark.parametrize("level", list(Level))
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_level_has_its_sentence(level, lang):
    text = level_sentence(level, _reading(93)).render(lang)
    assert "93" in text and "{" not in text


def test_this_machine_is_read_as_the_tighter_of_system_and_cgroup():
    reading = read_server_memory(os.getpid())
    assert 0 < reading.used_bytes < reading.limit_bytes and reading.scope in ("system", "cgroup")
    assert reading.server_rss_bytes and reading.server_rss_bytes > 10 * MiB
    assert 0 < reading.fraction < 1 and reading.to_dict()["percent"] == round(100 * reading.fraction, 1)


def _gpu(others_mib: list[tuple[str, int]]):
    from app.core.hardware.gpu import GpuInfo, GpuProcess

    processes = [GpuProcess(1000 + i, name, mib * MiB) for i, (name, mib) in enumerate(others_mib)]
    return GpuInfo(0, "NVIDIA GeForce RTX 3060", "GPU-1", 12288 * MiB, 4096 * MiB, 8192 * MiB, processes)


def test_another_program_grabbing_vram_is_said_once_per_half_gibibyte():
    from app.core.server.watchdog import VramWatch

    watch = VramWatch([_gpu([("Xorg", 300)])])
    assert watch.check([_gpu([("Xorg", 400)])]) == []  # 100 MiB: nothing to say
    (grab,) = watch.check([_gpu([("Xorg", 300), ("blender", 2150)])])
    assert grab.grown_bytes == 2150 * MiB and grab.programs == ("Xorg", "blender")
    text = grab.sentence().render("en")
    assert "Another program took 2.1 GiB of graphics memory on GPU 0 (NVIDIA GeForce RTX 3060)" in text
    assert "blender" in text and "{" not in grab.sentence().render("zh")
    assert watch.check([_gpu([("Xorg", 300), ("blender", 2300)])]) == []  # the same grab, not said again
    assert len(watch.check([_gpu([("Xorg", 300), ("blender", 2800)])])) == 1  # half a GiB more: said again


def test_no_gpu_no_vram_sentences():
    from app.core.server.watchdog import VramWatch

    assert VramWatch([]).check([]) == []
