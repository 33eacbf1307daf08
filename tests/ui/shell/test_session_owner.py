"""The window's model session along the user's path: what each step costs (engine look-ups, memory plans), and a
model switch that does not depend on which step was connected first."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.ui.conftest import LONG, open_and_wait, wait_for_plan
from tests.ui.own_port import save_a_port_of_its_own, use_a_port_of_its_own
from tests.ui.shell.session_counts import SessionCounts, config_holders

SERVER = 180_000


@pytest.fixture
def counts(monkeypatch):
    return SessionCounts(monkeypatch)


def test_the_owner_tells_the_steps_in_its_order(qtbot, window, tiny_model):
    """opened -> checked -> configured -> planned; the config is the session's when configured is told."""
    owner, told = window.owner, []
    for name in ("opened", "checked", "configured", "edited", "planned"):
        getattr(owner, name).connect(lambda *_args, name=name: told.append((name, window.session.config)))
    open_and_wait(qtbot, window, tiny_model)
    wait_for_plan(qtbot, window)
    names = [name for name, _config in told]
    assert names[:3] == ["opened", "checked", "configured"] and names[-1] == "planned", names
    assert told[1][1] is None and told[2][1] is not None  # the profile's settings come between the two
    assert told[2][1] == window.settings_panel.config() == window.session.config


@pytest.mark.slow  # real test loads and a real server
def test_counts_one_engine_look_up_and_one_plan_per_config(qtbot, counts, window, make_model):
    model = make_model("counted.gguf", ctx_train=1024)
    counts.phase = "open"
    open_and_wait(qtbot, window, model)
    wait_for_plan(qtbot, window)
    qtbot.wait(600)  # the settings are saved 400 ms after an edit: anything that follows them is counted here too
    counts.phase = "probe"
    probe = window.settings_panel.probe
    qtbot.mouseClick(probe.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not probe.running, timeout=SERVER)
    assert probe.result is not None and probe.result.recommendation is not None, probe.status.text()
    wait_for_plan(qtbot, window)  # the measured settings were applied: one plan for them
    attempts = len(probe.result.attempts)
    counts.phase = "port"  # not counted: a port of its own, not 8080 another test process may hold
    use_a_port_of_its_own(qtbot, window)
    wait_for_plan(qtbot, window)
    qtbot.waitUntil(lambda: window.store.idle, timeout=LONG)  # its settings saved: nothing of it in "start"
    counts.phase = "start"
    qtbot.mouseClick(window.server.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.server.state == "ready", timeout=SERVER)
    print(f"\n{counts.report()}\nprobe attempts: {attempts}\nconfig copies: {config_holders(window)}")
    # the session's config (the one the Settings step shows); the running server's (what it runs: its own key, the
    # port it got), last_good_config (what last reached Ready) and the session's plan_config (what the plan is for)
    assert config_holders(window) == ["session.config", "session.plan_config", "supervisor._config",
                                      "supervisor.last_good_config"]
    assert attempts >= 1  # real test loads: each is a server, started with the session's engine
    assert counts.total(counts.engines, "open") == 1 and counts.total(counts.plans, "open") == 1
    # the probe and its loads use the session's engine and plan; the one look-up and plan are the Settings step's
    # for the measured settings it applied (its command line and bars)
    assert counts.engines[("probe", "ui/steps/settings/settings_preview.py:compute_preview")] == 1
    assert counts.total(counts.engines, "probe") == 1 and counts.total(counts.plans, "probe") == 1
    assert counts.total(counts.engines, "start") == 0 and counts.total(counts.plans, "start") == 0


@pytest.mark.slow  # a real server, then a real switch to another model
def test_restart_chosen_before_the_checks_runs_the_new_model_with_its_own_settings(qtbot, window, tiny_model,
                                                                                  make_model):
    """Restart pressed while the new model is still being checked waits for its checks and its settings. It used
    to work only while the window connected the model switch after the profiles (swap those two lines in
    main_window.py and the switch stopped the server instead: the config was not there yet)."""
    other = make_model("second.gguf", n_layers=3)
    window.store.settings.update_profile(str(other), launch_config={"ctx": 1536})  # its own saved settings
    save_a_port_of_its_own(window, other)  # and a port of its own, not 8080 another test process may hold
    open_and_wait(qtbot, window, tiny_model)
    wait_for_plan(qtbot, window)
    use_a_port_of_its_own(qtbot, window)
    qtbot.mouseClick(window.server.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.server.state == "ready", timeout=SERVER)
    first = window.bridge.supervisor

    window.model.open_model(str(other))  # the question opens at once; the checks run in a worker
    assert window.model_switch.box is not None and window.model.report is None
    window.model_switch.buttons["restart"].click()  # before the checks are in: Restart waits for them
    assert window.statusBar().currentMessage() == "The server restarts with second.gguf once its checks are done."
    qtbot.waitUntil(lambda: window.bridge.supervisor not in (None, first) and window.server.state == "ready",
                    timeout=SERVER)
    running = window.bridge.supervisor.config
    assert running.model == str(other) and running.ctx == 1536  # the new model's profile, not the last settings
    assert first.state.value == "stopped" and window.session.config.ctx == 1536
