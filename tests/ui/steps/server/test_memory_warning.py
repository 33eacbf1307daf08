"""The memory watchdog in the Server step: its warning is shown while memory is short, the planned restart is
explained on the card as a restart on purpose (not a crash), and the warning goes with the server it was about.

The growing server is the test-only fake llama-server in its ``grow`` mode; the watchdog reads its real RSS
against a 64 MiB budget, so the whole path runs in a few seconds on any machine."""

from __future__ import annotations

import contextlib

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


def test_warning_then_planned_restart_card(qtbot, tiny_model, fake_server_bin):
    config = LaunchConfig(model=str(tiny_model), backend="llama-server", server_bin=fake_server_bin("grow"),
                          port=find_free_port())
    supervisor = Supervisor(config, extra_env={"FAKE_LLAMA_GROW_MB": "1"},
                            memory_watchdog=WatchdogLimits(interval_s=0.1, critical_samples=3))
    supervisor.watchdog.read = _rss_budget
    with _started_panel(qtbot, supervisor) as panel:
        qtbot.waitUntil(lambda: panel.memory_label.isVisible(), timeout=60_000)
        assert "Memory is running short" in panel.memory_label.text() and panel.state == "ready"
        apply_language("zh")
        panel.retranslate()
        assert "内存快不够了" in panel.memory_label.text()
        apply_language("en")
        panel.retranslate()
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
