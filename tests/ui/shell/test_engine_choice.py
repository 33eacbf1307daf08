"""The engine (built-in or llama-server, and the llama-server file) is app-wide: opening the next model keeps it.
Until the user chooses, it is llama-server, or the built-in engine with one sentence why when that cannot run."""

from __future__ import annotations

import pytest

from app.core.settings import load_settings
from tests.no_llama_server import hide_llama_server
from tests.ui.conftest import LONG, open_and_wait, wait_for_plan

SERVER_BIN = "/opt/llama.cpp/llama-server"


def _choose_llama_server(window, path: str = SERVER_BIN) -> None:
    form = window.settings_panel.advanced
    form.backend.setCurrentIndex(1)  # the user picks llama-server in Advanced (already shown: the default)
    form.server_bin.setText(path)
    form.server_bin.editingFinished.emit()  # and types its file


def test_opening_a_second_model_keeps_the_engine_and_its_path(qtbot, window, tiny_model, make_model):
    other = make_model("second.gguf", n_layers=3)
    open_and_wait(qtbot, window, tiny_model)
    wait_for_plan(qtbot, window)
    _choose_llama_server(window)
    assert window.session.config.backend == "llama-server" and window.session.config.server_bin == SERVER_BIN

    open_and_wait(qtbot, window, other)
    qtbot.waitUntil(lambda: window.session.config is not None and window.session.config.model == str(other),
                    timeout=LONG)
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
    assert window.session.config.backend == "llama-server"  # the default: the test set-up's llama-server runs
    window.settings_panel.advanced.engine_own.setChecked(True)
    window.settings_panel.advanced.backend.setCurrentIndex(0)  # the built-in engine, only for this model
    assert window.store.settings.engine == ("llama-server", None) and window.store.settings.engine_is_automatic()
    assert window.store.settings.engine_override(tiny_model) == ("embedded", None)

    open_and_wait(qtbot, window, other)
    qtbot.waitUntil(lambda: window.session.config is not None and window.session.config.model == str(other),
                    timeout=LONG)
    assert window.session.config.backend == "llama-server" and not window.settings_panel.engine_only_for_model()

    open_and_wait(qtbot, window, tiny_model)  # back to the first: its own engine again
    qtbot.waitUntil(lambda: window.session.config is not None and window.session.config.model == str(tiny_model),
                    timeout=LONG)
    assert window.session.config.backend == "embedded"
    assert window.settings_panel.engine_only_for_model()


@pytest.fixture
def no_llama_server(tmp_path, monkeypatch):
    hide_llama_server(monkeypatch, tmp_path / "empty")


def test_without_a_runnable_llama_server_the_built_in_engine_is_chosen_with_one_sentence(
        qtbot, no_llama_server, window, tiny_model):
    open_and_wait(qtbot, window, tiny_model)
    wait_for_plan(qtbot, window)
    panel = window.settings_panel
    assert window.session.config.backend == "embedded"
    assert panel.engine_reason.isVisible()
    assert panel.engine_reason.text().startswith("The built-in engine runs your models because")
    _choose_llama_server(window)  # the user picks one anyway: their choice, nothing left to explain
    assert not panel.engine_reason.isVisible()
    assert window.store.settings.engine == ("llama-server", SERVER_BIN)


def test_the_engine_a_server_reached_ready_with_is_remembered(qtbot, window, tiny_model, make_model):
    open_and_wait(qtbot, window, tiny_model)
    wait_for_plan(qtbot, window)
    worked = window.session.config.with_changes(backend="llama-server", server_bin=SERVER_BIN)
    window.profiles.on_server_ready(worked)  # as the window does when the server says Ready
    assert window.store.settings.engine == ("llama-server", SERVER_BIN)
    other = make_model("second.gguf", n_layers=3)
    open_and_wait(qtbot, window, other)
    qtbot.waitUntil(lambda: window.session.config is not None and window.session.config.model == str(other),
                    timeout=LONG)
    assert window.session.config.backend == "llama-server"
