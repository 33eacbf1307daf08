"""The Settings step's "without a key" choice: off by default, it reaches the config (and so the model's profile)."""

from __future__ import annotations

from tests.ui.conftest import open_and_wait, wait_for_plan


def test_keyless_is_off_by_default_and_reaches_the_config(qtbot, window, tiny_model):
    open_and_wait(qtbot, window, tiny_model)
    panel = window.settings_panel
    wait_for_plan(qtbot, window)
    assert not panel.keyless.isChecked() and panel.config().local_key  # a key unless the user says otherwise
    with qtbot.waitSignal(panel.configChanged, timeout=5_000):
        panel.keyless.setChecked(True)
    assert panel.config().local_key is False
    panel.apply_changes({"ctx": 1024})  # a fix or a recommendation keeps the choice
    assert panel.keyless.isChecked() and panel.config().local_key is False
