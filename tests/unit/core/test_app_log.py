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


def test_the_log_rotates_like_the_standard_library_handler(tmp_path):
    """The app's own small rotating handler (no logging.handlers at start-up) keeps the same files as
    RotatingFileHandler with the same size limit: same names, same contents, oldest dropped."""
    import logging.handlers

    ours_dir, stdlib_dir = tmp_path / "ours", tmp_path / "stdlib"
    ours_dir.mkdir()
    stdlib_dir.mkdir()
    ours = app_log._AppLogHandler(ours_dir / "x.log", 300, 3)
    stdlib = logging.handlers.RotatingFileHandler(stdlib_dir / "x.log", maxBytes=300, backupCount=3, encoding="utf-8")
    try:
        for number in range(200):
            record = logging.LogRecord("app.test", logging.INFO, __file__, 1, "line %d é", (number,), None)
            ours.handle(record)
            stdlib.handle(record)
    finally:
        ours.close()
        stdlib.close()
    names = sorted(path.name for path in stdlib_dir.iterdir())
    assert names == ["x.log", "x.log.1", "x.log.2", "x.log.3"]
    assert sorted(path.name for path in ours_dir.iterdir()) == names
    for name in names:
        assert (ours_dir / name).read_text(encoding="utf-8") == (stdlib_dir / name).read_text(encoding="utf-8")
    assert "line 199 é" in (ours_dir / "x.log").read_text(encoding="utf-8")


def test_starting_the_app_log_imports_no_logging_handlers():
    import subprocess
    import sys

    code = ("import sys, tempfile, os; os.environ['GGUF_LAUNCHER_HOME'] = tempfile.mkdtemp(); "
            "from app.core.app_log import configure_app_log; assert configure_app_log('cli') is not None; "
            "print('logging.handlers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"
