"""The Settings step, on real plans of generated models (no server needed)."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from tests.ui.conftest import LONG, open_and_wait, wait_for_plan


@pytest.mark.slow  # 1.2 s: plans of a wide model at 32768 tokens
def test_plan_bar_turns_red_when_memory_is_short_and_the_recommendation_applies(qtbot, window, make_model):
    model = make_model("wide.gguf", n_layers=4, n_embd=256, n_ff=512, ctx_train=32768)
    open_and_wait(qtbot, window, model)
    panel = window.settings_panel
    wait_for_plan(qtbot, window)
    hw = panel.hardware
    # llama-server, the default engine, plans 32768 tokens of this model within 800 MiB but not within 600
    small = dataclasses.replace(hw, ram_available_bytes=600 << 20, cgroup_memory_headroom_bytes=None)
    panel.set_hardware(small)
    panel.ctx.setValue(32768)
    qtbot.waitUntil(lambda: panel.plan is not None and panel.plan.ctx == 32768 and panel.wait_idle(), timeout=LONG)
    assert not panel.plan.fits
    assert panel.plan_bars.zones() == ["red"]
    assert "Does not fit" in panel.plan_text.text()
    assert panel.use_plan.isVisible() and panel.plan.recommended_ctx and panel.plan.recommended_ctx < 32768
    recommended = panel.plan.recommended_ctx
    qtbot.mouseClick(panel.use_plan, Qt.MouseButton.LeftButton)
    assert panel.ctx.value() == recommended
    qtbot.waitUntil(lambda: panel.plan.ctx == recommended and panel.wait_idle(), timeout=LONG)
    assert panel.plan.fits and panel.plan_bars.zones()[0] in ("green", "amber")
    # the edit is remembered in the model's profile
    qtbot.waitUntil(lambda: window.store.idle, timeout=LONG)
    stored = window.store.settings.profile(model)["launch_config"]
    assert stored["ctx"] == recommended


def test_advanced_settings_reach_the_exact_command_line_and_copy(qtbot, built_in_engine, window, tiny_model):
    open_and_wait(qtbot, window, tiny_model)
    panel = window.settings_panel
    wait_for_plan(qtbot, window)
    panel.advanced_box.set_expanded(True)
    panel.advanced.threads.setValue(3)
    panel.advanced.cache_k.setCurrentText("q8_0")
    panel.advanced.port.setValue(18555)
    qtbot.waitUntil(lambda: "--n_threads 3" in panel.command.text() and panel.wait_idle(), timeout=LONG)
    command = panel.command.text()
    assert "--type_k 8" in command and "--port 18555" in command and str(tiny_model) in command
    qtbot.mouseClick(panel.copy_command, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == command
    config = panel.config()
    assert (config.threads, config.cache_type_k, config.port) == (3, "q8_0", 18555)


def test_with_a_gpu_the_layer_slider_and_a_vram_bar_appear(qtbot, built_in_engine, window, make_model):
    """A machine report with one 4 GiB NVIDIA GPU (as NVML reports it): the plan gets a VRAM bar."""
    from app.core.hardware.scan import GpuInfo

    model = make_model("layers.gguf", n_layers=6)
    open_and_wait(qtbot, window, model)
    panel = window.settings_panel
    wait_for_plan(qtbot, window)
    gpu = GpuInfo(index=0, name="Test GPU", uuid="GPU-0", vram_total_bytes=4 << 30, vram_free_bytes=4 << 30,
                  vram_used_bytes=0, driver_version="550.54", cuda_driver_version="12.4")
    panel.set_hardware(dataclasses.replace(panel.hardware, gpus=[gpu]))
    assert panel.gpu_layers.isEnabled() and panel.gpu_layers.maximum() == 7
    panel.gpu_layers.setValue(7)
    assert panel.gpu_layers_label.text() == "all 7"
    qtbot.waitUntil(lambda: panel.plan is not None and panel.plan.gpu_layers == 7 and panel.wait_idle(), timeout=LONG)
    titles = [label.text() for label, bar in panel.plan_bars.rows if bar.isVisibleTo(panel)]
    assert titles == ["VRAM, GPU 0", "RAM"] or titles == ["RAM", "VRAM, GPU 0"]
    assert panel.config().gpu_layers == 7
    assert "--n_gpu_layers 7" in panel.command.text()
