"""Fixtures for driving the real main window offscreen (settings live in the per-test app home)."""

from __future__ import annotations

import os
import sys

import pytest

from app.core.problem import Status

LONG = 60_000  # ms: generous, the suite shares 2 cores with other work

MODEL_FOLDER_VARIABLES = ("OLLAMA_MODELS", "HF_HUB_CACHE", "HF_HOME", "LLAMA_CACHE", "XDG_CACHE_HOME",
                          "XDG_CONFIG_HOME", "XDG_DATA_HOME", "APPDATA", "LOCALAPPDATA", "USERPROFILE")


@pytest.fixture(autouse=True)
def no_real_model_folders(tmp_path_factory, monkeypatch):
    """The Model step looks for models other apps downloaded: in window tests it looks in an empty home, never
    in this machine's (what it finds there would differ from machine to machine)."""
    from app.core.library import sources

    empty_home = tmp_path_factory.mktemp("user-home")
    for name in MODEL_FOLDER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    real_home_dir = sources.home_dir

    def home_dir(env, platform=sys.platform):  # a test's own fake home (passed as env) is kept
        return empty_home if env is os.environ else real_home_dir(env, platform)

    monkeypatch.setattr(sources, "home_dir", home_dir)


@pytest.fixture
def window(qtbot, qapp):
    from app.core.settings import load_settings
    from app.ui import workers
    from app.ui.shell.main_window import MainWindow

    win = MainWindow(load_settings(), live_hardware=False)
    # not qtbot.addWidget: pytest-qt would close and delete the window before this fixture's teardown,
    # while the server is still stopping; the window is closed here the way a user closes it
    win.show()
    win.start()
    qtbot.waitUntil(lambda: win.settings_panel.hardware is not None, timeout=LONG)
    yield win
    win.close()
    try:
        qtbot.waitUntil(lambda: win._close_state == "done", timeout=LONG)
    except Exception as error:
        sup = win.bridge.supervisor
        history = [e.state for e in getattr(sup, "history", [])][-8:]
        raise AssertionError(f"window did not close: close_state={win._close_state} server={win.control.state()} "
                             f"busy={win.bridge.is_busy()} history={history}") from error
    win.shutdown_blocking()
    qtbot.waitUntil(lambda: workers.active_count() == 0, timeout=LONG)
    win.deleteLater()


def open_and_wait(qtbot, win, path) -> object:
    """Open ``path`` in the Model step and wait for its checks."""
    win.model.open_model(str(path))
    qtbot.waitUntil(lambda: win.model.report is not None and win.model.report.path == str(path), timeout=LONG)
    return win.model.report


def statuses(report) -> dict[str, Status]:
    return {c.id: c.status for c in report.checks}


def wait_for_plan(qtbot, win) -> object:
    qtbot.waitUntil(lambda: win.settings_panel.plan is not None and win.settings_panel.wait_idle(), timeout=LONG)
    return win.settings_panel.plan


@pytest.fixture
def built_in_engine(app_home):
    """The user chose the built-in engine (llama-cpp-python) in an earlier session: for a test about that engine,
    or one that needs its slower answers. Request it before ``window``. The default is llama-server."""
    from app.core.settings import load_settings

    settings = load_settings()
    settings.set_engine("embedded", None)
    settings.save()
