"""The engine (built-in or llama-server, and the llama-server file) is app-wide: opening the next model keeps it."""

from __future__ import annotations

from app.core.settings import load_settings
from tests.ui.conftest import open_and_wait, wait_for_plan

SERVER_BIN = "/opt/llama.cpp/llama-server"


def _choose_llama_server(window, path: str = SERVER_BIN) -> None:
    form = window.settings_panel.advanced
    form.server_bin.setText(path)
    form.backend.setCurrentIndex(1)  # the user picks llama-server in Advanced


def test_opening_a_second_model_keeps_the_engine_and_its_path(qtbot, window, tiny_model, make_model):
    other = make_model("second.gguf", n_layers=3)
    open_and_wait(qtbot, window, tiny_model)
    wait_for_plan(qtbot, window)
    _choose_llama_server(window)
    assert window.session.config.backend == "llama-server" and window.session.config.server_bin == SERVER_BIN

    open_and_wait(qtbot, window, other)
    qtbot.waitUntil(lambda: window.session.config is not None and window.session.config.model == str(other))
    config = window.settings_panel.config()
    assert (config.backend, config.server_bin) == ("llama-server", SERVER_BIN)
    assert window.settings_panel.engine() == ("llama-server", SERVER_BIN)
    assert not window.settings_panel.engine_only_for_model()
    assert window.store.settings.engine == ("llama-server", SERVER_BIN)
    window.store.flush_blocking()
    assert load_settings().engine == ("llama-server", SERVER_BIN)  # and the next start of the app has it too


def test_an_engine_only_for_one_model_leaves_the_others_alone(qtbot, window, tiny_model, make_model):
    other = make_model("second.gguf", n_layers=3)
    open_and_wait(qtbot, window, tiny_model)
    wait_for_plan(qtbot, window)
    window.settings_panel.advanced.engine_own.setChecked(True)
    _choose_llama_server(window)
    assert window.store.settings.engine == ("embedded", None)
    assert window.store.settings.engine_override(tiny_model) == ("llama-server", SERVER_BIN)

    open_and_wait(qtbot, window, other)
    qtbot.waitUntil(lambda: window.session.config is not None and window.session.config.model == str(other))
    assert window.session.config.backend == "embedded" and not window.settings_panel.engine_only_for_model()

    open_and_wait(qtbot, window, tiny_model)  # back to the first: its own engine again
    qtbot.waitUntil(lambda: window.session.config is not None and window.session.config.model == str(tiny_model))
    assert (window.session.config.backend, window.session.config.server_bin) == ("llama-server", SERVER_BIN)
    assert window.settings_panel.engine_only_for_model()


def test_the_engine_a_server_reached_ready_with_is_remembered(qtbot, window, tiny_model, make_model):
    open_and_wait(qtbot, window, tiny_model)
    wait_for_plan(qtbot, window)
    worked = window.session.config.with_changes(backend="llama-server", server_bin=SERVER_BIN)
    window.profiles.on_server_ready(worked)  # as the window does when the server says Ready
    assert window.store.settings.engine == ("llama-server", SERVER_BIN)
    other = make_model("second.gguf", n_layers=3)
    open_and_wait(qtbot, window, other)
    qtbot.waitUntil(lambda: window.session.config is not None and window.session.config.model == str(other))
    assert window.session.config.backend == "llama-server"
