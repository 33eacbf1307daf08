"""Opening another model while a server runs asks what to do with the server (no real server: a stand-in)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.ui.conftest import open_and_wait, wait_for_plan


@pytest.fixture
def running(window, tiny_model):
    """The window believes a server runs ``tiny_model``; Restart and Stop are recorded, not done (until the window
    closes: its own patch, undone before the window fixture closes it)."""
    calls = []
    sup = SimpleNamespace(config=SimpleNamespace(model=str(tiny_model)))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(type(window.control), "supervisor", property(lambda _self: sup))
        patch.setattr(window.control, "is_running", lambda: True)
        patch.setattr(window.control, "restart", lambda: calls.append(("restart", window.settings_panel.config())))
        patch.setattr(window.control, "stop", lambda: calls.append(("stop", None)))
        window.running_patch = patch
        yield calls


def _question(qtbot, window):
    qtbot.waitUntil(lambda: window.model_switch.box is not None and window.model_switch.box.isVisible())
    return window.model_switch.box


def test_restart_runs_the_new_model_with_its_own_settings(qtbot, window, tiny_model, make_model, running):
    other = make_model("second.gguf", n_layers=3)
    window.model.open_model(str(other))
    box = _question(qtbot, window)
    assert box.text() == f"The server is still running {tiny_model.name}. Restart it with second.gguf?"
    assert [b.text() for b in box.buttons()].count("Stop it") == 1
    window.model_switch.buttons["restart"].click()
    qtbot.waitUntil(lambda: bool(running), timeout=60_000)  # after the new model's checks
    action, config = running[0]
    assert action == "restart" and config.model == str(other)
    assert window.model_switch.box is None


def test_stop_stops_at_once_and_keep_leaves_the_server(qtbot, window, tiny_model, make_model, running):
    other = make_model("second.gguf", n_layers=3)
    window.model.open_model(str(other))
    _question(qtbot, window)
    window.model_switch.buttons["stop"].click()
    assert running == [("stop", None)]

    third = make_model("third.gguf", n_layers=3)
    open_and_wait(qtbot, window, third)
    _question(qtbot, window)
    window.model_switch.buttons["keep"].click()
    wait_for_plan(qtbot, window)
    assert running == [("stop", None)]
    assert tiny_model.name in window.statusBar().currentMessage()


def test_the_same_model_again_or_no_server_asks_nothing(qtbot, window, tiny_model, make_model, running):
    open_and_wait(qtbot, window, tiny_model)
    assert window.model_switch.box is None
    window.running_patch.setattr(window.control, "is_running", lambda: False)
    open_and_wait(qtbot, window, make_model("second.gguf", n_layers=3))
    assert window.model_switch.box is None and running == []


def test_the_open_question_follows_a_language_switch(qtbot, window, tiny_model, make_model, running):
    other = make_model("third.gguf", n_layers=3)
    window.model.open_model(str(other))
    box = _question(qtbot, window)
    window.set_language("zh")
    try:
        assert box.text() == f"服务器仍在运行 {tiny_model.name}。要用 third.gguf 重新启动它吗？", box.text()
        assert window.model_switch.buttons["stop"].text() == "停止它"
        assert box.isVisible() and window.model_switch.box is box  # the same question, still open
    finally:
        window.set_language("en")
    assert window.model_switch.buttons["keep"].text() == "Keep it running"
    window.model_switch.buttons["keep"].click()
