"""The memory watchdog in the Server step: its warning is shown while memory is short, the planned restart is
explained on the card as a restart on purpose (not a crash), and the warning goes with the server it was about.

The growing server is the test-only fake llama-server in its ``grow`` mode; the watchdog reads its real RSS
against a 64 MiB budget, so the whole path runs in a few seconds on any machine."""

from __future__ import annotations

import contextlib
import threading

import psutil
import pytest

from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.server.supervisor import Supervisor
from app.core.server.watchdog import MemoryReading, WatchdogLimits
from app.ui.i18n import apply_language
from app.ui.steps.server.supervisor_bridge import SupervisorBridge
from tests.ui.steps.server.wiring import wired_panel

pytestmark = pytest.mark.slow  # a real child process and the watchdog's real readings

BUDGET = 64 * 1024 * 1024


def _rss_budget(pid):
    rss = psutil.Process(pid).memory_info().rss if pid else 0
    return MemoryReading(rss, BUDGET, "test budget", rss)


@contextlib.contextmanager
def _started_panel(qtbot, supervisor):
    """The Server step on ``supervisor``, Start pressed; everything stopped and closed afterwards."""
    bridge = SupervisorBridge(supervisor)
    panel, _control = wired_panel(bridge)
    qtbot.addWidget(panel)
    panel.show()
    try:
        panel.start_button.click()
        yield panel
    finally:
        bridge.close()
        bridge.wait_for_actions()
        supervisor.close()


class _HeldAtWarning:
    """The first server's real RSS against BUDGET, held just under the critical share until ``release``.

    The fake grows 10 MiB/s for ever: unheld, the warning lasted ~0.7 s (warn at 85 %, critical at 92 % three
    readings in a row) and on a loaded machine this test's GUI thread could handle it and the critical reading in
    one go, the label never seen shown, and the next server's growth made a second planned restart before "ready
    with one planned restart" was seen: timeouts. The server after the planned restart is read against a budget it
    never nears, so exactly one restart happens; every reading is still the real process's RSS."""

    def __init__(self) -> None:
        self.first_pid: int | None = None
        self.release = threading.Event()

    def __call__(self, pid):
        reading = _rss_budget(pid)
        if self.first_pid is None and pid:
            self.first_pid = pid
        if pid != self.first_pid:
            return MemoryReading(reading.used_bytes, 1000 * BUDGET, "test budget", reading.server_rss_bytes)
        if self.release.is_set():
            return reading
        held = min(reading.used_bytes, int(0.9 * BUDGET))  # WARNING (85 %) is reached, CRITICAL (92 %) is not
        return MemoryReading(held, BUDGET, "test budget", held)


def test_warning_then_planned_restart_card(qtbot, tiny_model, fake_server_bin):
    config = LaunchConfig(model=str(tiny_model), backend="llama-server", server_bin=fake_server_bin("grow"),
                          port=find_free_port())
    supervisor = Supervisor(config, extra_env={"FAKE_LLAMA_GROW_MB": "1"},
                            memory_watchdog=WatchdogLimits(interval_s=0.1, critical_samples=3))
    readings = _HeldAtWarning()
    supervisor.watchdog.read = readings
    with _started_panel(qtbot, supervisor) as panel:
        qtbot.waitUntil(lambda: panel.memory_label.isVisible(), timeout=60_000)
        assert "Memory is running short" in panel.memory_label.text() and panel.state == "ready"
        apply_language("zh")
        panel.retranslate()
        assert "内存快不够了" in panel.memory_label.text()
        apply_language("en")
        panel.retranslate()
        readings.release.set()  # the real RSS from now on: over the critical share
        qtbot.waitUntil(lambda: panel.crash_card.isVisible(), timeout=30_000)
        assert panel.crash_card.diagnosis.cause == "memory_watchdog"
        qtbot.waitUntil(lambda: panel.state == "ready" and supervisor.planned_restarts == 1, timeout=30_000)
        assert "restarted on purpose" in panel.crash_card.title.text()
        assert "restarted now" in panel.crash_card.problem.message.text()
        assert not panel.crash_card.apply_button.isVisible()  # nothing to apply: it already happened
        assert supervisor.restart_count == 0


def test_another_program_taking_gpu_memory_is_said_in_the_server_step(qtbot, tiny_model, fake_server_bin):
    """No GPU here: the GPU readings are NVML's answers as GpuInfo values, another program's share growing by
    2.1 GiB after the server became ready."""
    from app.core.hardware.gpu import GpuInfo, GpuProcess

    mib = 1024 * 1024
    readings = iter([300, 300, 2450] + [2450] * 1000)

    def gpus(_exclude):
        held = next(readings) * mib
        return [GpuInfo(0, "NVIDIA GeForce RTX 3060", "GPU-1", 12288 * mib, 4096 * mib, 8192 * mib,
                        [GpuProcess(4242, "blender", held)])]

    config = LaunchConfig(model=str(tiny_model), backend="llama-server", server_bin=fake_server_bin("grow"),
                          port=find_free_port())
    supervisor = Supervisor(config, extra_env={"FAKE_LLAMA_GROW_MB": "0"},
                            memory_watchdog=WatchdogLimits(interval_s=0.05))
    supervisor.watchdog.read_gpus = gpus
    with _started_panel(qtbot, supervisor) as panel:
        qtbot.waitUntil(lambda: panel.memory_label.isVisible(), timeout=60_000)
        assert "Another program took 2.1 GiB of graphics memory on GPU 0" in panel.memory_label.text()
        assert "blender" in panel.memory_label.text() and panel.state == "ready"
