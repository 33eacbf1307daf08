"""One rule applies a crash's fix to a launch config, for the Settings step and the supervisor alike."""

from __future__ import annotations

from app.core.launch.config import LaunchConfig, apply_fix, fix_changes


def test_setting_changes_apply_and_other_keys_are_left_out():
    config = LaunchConfig(model="m.gguf", ctx=8192, gpu_layers=35)
    fixed = apply_fix(config, {"ctx": 4096, "gpu_layers": 28, "rebuild_engine": "embedded", "model": "other.gguf"})
    assert fixed == config.with_changes(ctx=4096, gpu_layers=28)
    assert config.ctx == 8192  # a new config; the old one is untouched


def test_any_free_port_keeps_the_port_number_and_lets_the_start_pick_one():
    config = LaunchConfig(model="m.gguf", port=8080, pick_free_port=False)
    assert fix_changes({"port": 0}) == {"pick_free_port": True}
    fixed = apply_fix(config, {"port": 0})
    assert fixed.port == 8080 and fixed.pick_free_port  # never port 0 in the Settings step or the profile
    assert apply_fix(config, {"port": 9000}).port == 9000  # a real port number is just a change
