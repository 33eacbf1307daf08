"""Small pure helpers of the window: progress fractions, saved configs, diagnosis fixes, bar zones."""

from __future__ import annotations

from app.core.launch.config import LaunchConfig
from app.ui.steps.model import model_actions
from app.ui.steps.server import server_control
from app.ui.widgets.memory_bar import MemoryBar, Segment, zone_for


def test_progress_fraction_from_the_shapes_core_reports():
    assert model_actions.fraction((50, 200)) == 0.25
    assert model_actions.fraction({"done": 3, "total": 4}) == 0.75
    assert model_actions.fraction(0.5) == 0.5
    assert model_actions.fraction(40) == 0.4  # a percentage
    assert model_actions.fraction((5, 0)) == 0.0 and model_actions.fraction(None) == 0.0


def test_config_for_uses_the_saved_profile_or_safe_defaults(tiny_model):
    from app.core.gguf import read_model_info

    info = read_model_info(tiny_model)
    fresh = server_control.config_for(str(tiny_model), info, None)
    assert fresh.model == str(tiny_model) and fresh.ctx == min(4096, info.context_length)
    saved = LaunchConfig(model="/elsewhere.gguf", ctx=1536, threads=2).to_dict()
    restored = server_control.config_for(str(tiny_model), info, saved)
    assert (restored.model, restored.ctx, restored.threads) == (str(tiny_model), 1536, 2)
    hand_edited = {"ctx": "not a number", "parallel": None, "threads": "two", "flash_attn": True, "x": 1,
                   "gpu_layers": True, "extra_args": ["--verbose"]}
    repaired = server_control.config_for(str(tiny_model), info, hand_edited)
    assert repaired == fresh.with_changes(flash_attn=True, extra_args=("--verbose",))


def test_diagnosis_fixes_become_settings_changes():
    assert server_control.fix_for_settings({"ctx": 2048, "gpu_layers": 10}) == {"ctx": 2048, "gpu_layers": 10}
    assert server_control.fix_for_settings({"port": 0}) == {"pick_free_port": True}
    assert server_control.fix_for_settings({"unknown": 1}) == {}
    assert server_control.same_model("/a/b/../m.gguf", "/a/m.gguf")


def test_memory_bar_zones(qtbot):
    assert [zone_for(f) for f in (0.1, 0.85, 0.99)] == ["green", "amber", "red"]
    bar = MemoryBar()
    qtbot.addWidget(bar)
    bar.set_usage([Segment("weights", 60), Segment("other", 30, other=True)], 100)
    assert bar.used == 90 and bar.zone == "amber" and "90 B / 100 B" in bar.text()
    bar.set_usage([Segment("weights", 10)], 100, zone="red")
    assert bar.zone == "red"  # the plan's verdict wins over the fill level
    bar.resize(300, 24)
    assert not bar.grab().isNull()
