"""One rule applies a crash's fix to a launch config, for the Settings step and the supervisor alike."""

from __future__ import annotations

import pytest

from app.core.launch.config import CHANGEABLE_SETTINGS, ConfigChanges, LaunchConfig, apply_fix, fix_changes


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


def test_config_changes_are_a_read_only_value_made_by_the_same_rule():
    changes = ConfigChanges({"rpc_workers": ["a:1"], "port": 0, "rebuild_engine": "embedded"}, ctx=2048)
    assert dict(changes) == {"rpc_workers": ("a:1",), "pick_free_port": True, "ctx": 2048}
    assert ConfigChanges(changes) == changes  # made again from itself: the same
    with pytest.raises(TypeError):
        changes["ctx"] = 1  # type: ignore[index]
    config = LaunchConfig(model="m.gguf", pick_free_port=False)
    assert config.apply(changes) == apply_fix(config, {"rpc_workers": ["a:1"], "port": 0, "ctx": 2048})
    assert config.apply(ConfigChanges()) == config
    assert not CHANGEABLE_SETTINGS - set(LaunchConfig.__dataclass_fields__) and "model" not in CHANGEABLE_SETTINGS
