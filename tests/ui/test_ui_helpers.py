"""Small pure helpers of the window: progress fractions, diagnosis fixes, bar zones.

Saved launch configs are read by core now: tests/unit/core/test_session.py."""

from __future__ import annotations

from app.core.launch.config import fix_changes
from app.ui.steps.model import model_actions
from app.ui.steps.server import server_control
from app.ui.widgets.memory_bar import MemoryBar, Segment, zone_for


def test_progress_fraction_from_the_shapes_core_reports():
    assert model_actions.fraction((50, 200)) == 0.25
    assert model_actions.fraction({"done": 3, "total": 4}) == 0.75
    assert model_actions.fraction(0.5) == 0.5
    assert model_actions.fraction(40) == 0.4  # a percentage
    assert model_actions.fraction((5, 0)) == 0.0 and model_actions.fraction(None) == 0.0


def test_diagnosis_fixes_become_settings_changes():
    assert fix_changes({"ctx": 2048, "gpu_layers": 10}) == {"ctx": 2048, "gpu_layers": 10}
    assert fix_changes({"port": 0}) == {"pick_free_port": True}
    assert fix_changes({"unknown": 1}) == {}
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
