"""No silent CPU fallback in the window: with an NVIDIA GPU (simulated: this machine has none) and the real
CPU-only built-in engine, the Machine and Settings steps say so before Start, with the fixes as buttons.

Real pieces: the real built-in engine's backends, the real finder on a temporary HOME with a planted CUDA
llama-server (a shell script answering --version/--help), a stand-in nvcc on PATH (only looked for). Only the
compile is replaced by a step that records its backend (a real CUDA build takes half an hour and a toolkit)."""

from __future__ import annotations

import dataclasses
import os
import threading

import pytest
from PySide6.QtCore import Qt

from app.core.hardware.gpu import GpuInfo
from app.core.launch import discovery
from app.core.problem import UserError
from app.core.text import T
from app.ui.steps.machine.gpu_notice import GpuEngineNotice
from app.ui.steps.machine.machine_panel import MachinePanel
from app.ui.widgets.job_row import JobState
from tests.fakes.planted_servers import CUDA_VERSION, plant, plant_tool
from tests.ui.conftest import LONG, open_and_wait

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the planted programs are POSIX shell scripts")
CARD = GpuInfo(0, "NVIDIA GeForce RTX 2080", None, 8 << 30, 7 << 30, 1 << 30, driver_version="550.54",
               cuda_driver_version="12.4")


@pytest.fixture
def gpu_home(tmp_path, monkeypatch):
    """A HOME with a CUDA llama-server release in Downloads, and nvcc on PATH."""
    home = tmp_path / "home"
    server = plant(home / "Downloads" / "llama-b6500-bin-ubuntu-cuda-x64" / "build" / "bin" / "llama-server",
                   CUDA_VERSION)
    tools = tmp_path / "tools"
    plant_tool(tools, "nvcc")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    discovery.clear_cache()
    yield server
    discovery.clear_cache()


def _click(qtbot, button) -> None:
    """Click as a user does, on the button as it is on screen: the window lays the notice out in the event loop
    after it appears, and until then its buttons have no height, so a click there lands beside them."""
    assert button.isVisibleTo(button.window()) and button.isEnabled(), button.text()
    qtbot.waitUntil(lambda: button.height() >= button.minimumSizeHint().height(), timeout=LONG)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def _with_gpu(report):
    return dataclasses.replace(report, gpus=[CARD], nvidia_note=None)


def _visible_buttons(notice: GpuEngineNotice) -> list[str]:
    return [b.text() for b in notice.buttons if b.isVisibleTo(notice)]


def _say_it_with_a_gpu(qtbot, window) -> None:
    """The Machine step's scan, now with the card: both notices look up in their own workers, in either order."""
    window.machine._on_scanned(_with_gpu(window.machine.report))
    for notice in (window.machine.gpu_notice, window.settings_panel.gpu_notice):
        qtbot.waitUntil(lambda n=notice: n.isVisibleTo(window), timeout=LONG)


@pytest.mark.slow  # the whole window with its real workers: the model's checks, the engine's, the finder's
def test_the_machine_step_says_it_and_offers_the_found_server_and_a_cuda_rebuild(qtbot, window, gpu_home,
                                                                                tiny_model):
    machine, settings = window.machine, window.settings_panel
    open_and_wait(qtbot, window, tiny_model)
    qtbot.waitUntil(lambda: machine.report is not None and settings.config() is not None, timeout=LONG)
    assert not machine.gpu_notice.isVisibleTo(window), "no GPU here: nothing to say"
    _say_it_with_a_gpu(qtbot, window)
    for notice in (machine.gpu_notice, settings.gpu_notice):
        text = notice.problem.message.text()
        assert "NVIDIA graphics card (NVIDIA GeForce RTX 2080)" in text, text
        assert "llama-server was built without" in text, text  # the default engine is the app's CPU llama-server
        assert "--" not in text + notice.problem.next_step.text()
        assert _visible_buttons(notice) == ["Use the llama-server in llama-b6500-bin-ubuntu-cuda-x64 (CUDA)",
                                            "Rebuild the built-in engine with CUDA"]
        assert notice.buttons[0].toolTip() == str(gpu_home)

    with qtbot.waitSignal(settings.engineChanged, timeout=LONG) as changed:
        _click(qtbot, machine.gpu_notice.buttons[0])
    assert changed.args == ["llama-server", str(gpu_home)]
    assert settings.engine() == ("llama-server", str(gpu_home))


@pytest.mark.slow  # the whole window with its real workers
def test_the_rebuild_button_rebuilds_with_cuda_and_shows_progress_in_settings(qtbot, window, gpu_home, tiny_model):
    machine, settings = window.machine, window.settings_panel
    open_and_wait(qtbot, window, tiny_model)
    qtbot.waitUntil(lambda: machine.report is not None and settings.config() is not None, timeout=LONG)
    asked, release = [], threading.Event()

    def rebuild_step(progress, cancel, gpu=None):
        asked.append(gpu)
        release.wait(30)
        raise UserError(T("Rebuilding the engine failed.", "重新构建引擎失败。"), T("Try again.", "请重试。"))

    window.control.rebuild_step = rebuild_step
    _say_it_with_a_gpu(qtbot, window)  # the Machine step's buttons are asserted on too
    _click(qtbot, settings.gpu_notice.buttons[1])
    qtbot.waitUntil(lambda: asked == ["cuda"], timeout=LONG)
    box = settings.gpu_notice.progress_box
    qtbot.waitUntil(lambda: box.isVisibleTo(window), timeout=LONG)
    assert "Rebuilding the built-in engine with CUDA" in box.job.status.text()
    assert "with CUDA" in machine.rebuild_box.job.status.text()
    assert not machine.gpu_notice.buttons[1].isEnabled(), "one rebuild at a time"
    release.set()
    qtbot.waitUntil(lambda: box.state is JobState.FAILED, timeout=LONG)
    assert "Rebuilding the engine failed." in box.job.status.text()
    assert machine.gpu_notice.buttons[1].isEnabled()


def test_no_gpu_engine_and_no_fix_here_still_says_so_without_buttons(qtbot, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path / "empty-home"))
    monkeypatch.setattr("app.core.engine.gpu_build.available_gpu_builds", lambda: [])
    panel = MachinePanel(live=False)
    qtbot.addWidget(panel)
    panel.show()
    from app.core.hardware.scan import scan_hardware

    panel.gpu_notice.look_up(_with_gpu(scan_hardware()), "embedded")
    qtbot.waitUntil(lambda: panel.gpu_notice.isVisible(), timeout=LONG)
    assert _visible_buttons(panel.gpu_notice) == []
    assert "llama.cpp release built for your graphics card" in panel.gpu_notice.problem.next_step.text()


@pytest.mark.parametrize("newer", ["the engine was rebuilt", "another engine was chosen"])
def test_an_answer_to_an_older_wish_is_never_shown(qtbot, monkeypatch, tmp_path, newer):
    """Core's answer comes from a worker; the one asked before the rebuild (or for the engine chosen before) may
    come after the wish changed: it is dropped and core is asked again."""
    monkeypatch.setenv("HOME", str(tmp_path / "empty-home"))
    monkeypatch.setattr("app.core.engine.gpu_build.available_gpu_builds", lambda: [])
    from app.core.hardware.scan import scan_hardware
    from app.core.launch.gpu_engine import engine_gpu_warning

    report = _with_gpu(scan_hardware())
    before, after = engine_gpu_warning(report, "embedded", None), engine_gpu_warning(report, "embedded", None)
    assert before is not None and after is not None
    asked, may_answer = [], threading.Event()

    def look_up(report, engine, server_bin):  # the worker's look-up: the first answer waits for the test
        asked.append((engine, server_bin))
        if len(asked) == 1:
            may_answer.wait(30)
            return before
        return after

    monkeypatch.setattr("app.ui.steps.machine.gpu_notice.look_up", look_up)
    notice = GpuEngineNotice()
    qtbot.addWidget(notice)
    shown = []
    monkeypatch.setattr(notice, "set_warning", lambda warning, show=notice.set_warning: (shown.append(warning),
                                                                                         show(warning)))
    notice.look_up(report, "embedded")
    qtbot.waitUntil(lambda: len(asked) == 1, timeout=LONG)
    if newer == "the engine was rebuilt":
        notice.look_again()
    else:
        notice.look_up(report, "llama-server", "/opt/llama/llama-server")
    may_answer.set()
    qtbot.waitUntil(lambda: len(shown) == 1, timeout=LONG)
    assert shown[0] is after, "the answer to the older wish was shown"
    assert asked[1] == (("embedded", None) if newer == "the engine was rebuilt"
                        else ("llama-server", "/opt/llama/llama-server"))
    notice.look_up(report, *asked[1])
    assert len(asked) == 2, "the same wish again: its answer is shown already, nothing to ask"
