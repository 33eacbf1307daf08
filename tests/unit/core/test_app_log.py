"""The app's own log file: created beside the server logs under the (isolated) home, and a swallowed error now
leaves a line in it instead of vanishing."""

from __future__ import annotations

import logging

import pytest

from app.core import app_log, paths
from app.core.app_log import APP_LOG_NAME, close_app_log, configure_app_log


@pytest.fixture(autouse=True)
def detached():
    yield
    close_app_log()


def _flush() -> None:
    for handler in logging.getLogger("app").handlers:
        handler.flush()


def test_log_file_is_created_in_the_server_log_folder(app_home):
    path = configure_app_log("cli")
    assert path == paths.log_dir() / APP_LOG_NAME and path.parent == app_home / "log"
    _flush()
    text = path.read_text(encoding="utf-8")
    assert "GGUF Launcher" in text and "started (cli;" in text and "[cli " in text


def test_a_swallowed_error_leaves_a_line(app_home, monkeypatch):
    from app.core.probe import margins

    def broken_cgroup():
        raise RuntimeError("strange cgroup layout")

    monkeypatch.setattr(margins, "read_cgroup_memory", broken_cgroup)
    path = configure_app_log("gui")
    free = margins.read_free_now()  # still swallowed: RAM alone is used
    assert free.ram_total_bytes > 0
    _flush()
    text = path.read_text(encoding="utf-8")
    assert "WARNING" in text and "app.core.probe.margins" in text and "RuntimeError: strange cgroup layout" in text


def test_debug_lines_only_when_asked(app_home, monkeypatch):
    path = configure_app_log("cli")
    logging.getLogger("app.core.hardware.cgroup").debug("a quiet detail")
    monkeypatch.setenv(app_log.LEVEL_ENV, "DEBUG")
    close_app_log()
    configure_app_log("cli")
    logging.getLogger("app.core.hardware.cgroup").debug("a loud detail")
    _flush()
    text = path.read_text(encoding="utf-8")
    assert "a quiet detail" not in text and "a loud detail" in text


def test_configure_twice_keeps_one_handler_and_follows_a_new_home(app_home, monkeypatch, tmp_path):
    first = configure_app_log("cli")
    assert configure_app_log("cli") == first
    monkeypatch.setenv("GGUF_LAUNCHER_HOME", str(tmp_path / "other-home"))
    second = configure_app_log("cli")
    assert second == tmp_path / "other-home" / "log" / APP_LOG_NAME and second.exists()
    assert sum(isinstance(h, app_log._AppLogHandler) for h in logging.getLogger("app").handlers) == 1


def test_an_unwritable_log_folder_never_raises(monkeypatch, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("GGUF_LAUNCHER_HOME", str(blocker))  # log_dir() cannot be made below a file
    assert configure_app_log("gui") is None
    logging.getLogger("app.core.server.supervisor").warning("still fine")  # no handler, no exception


def test_no_environment_or_keys_in_the_start_line(app_home, monkeypatch):
    monkeypatch.setenv("GGUF_LAUNCHER_TEST_SECRET", "sk-do-not-log-me")
    path = configure_app_log("cli")
    _flush()
    assert "sk-do-not-log-me" not in path.read_text(encoding="utf-8")
