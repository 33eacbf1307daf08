"""Uncaught exceptions (app.core.app_log.install_crash_hook): the traceback goes to the app log, the terminal gets one
sentence saying where, once per burst, and a failure that repeats cannot fill the log."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading

import pytest

from app.core import app_log
from app.core.app_log import close_app_log, configure_app_log, install_crash_hook, uninstall_crash_hook


@pytest.fixture
def hooked(app_home, monkeypatch):
    """The app log and the crash hook, installed as in a real process (pytest's own thread hook stands aside for
    the test and comes back after it). Yields the list of what the window would have been told."""
    monkeypatch.setattr(sys, "excepthook", sys.__excepthook__)
    monkeypatch.setattr(threading, "excepthook", threading.__excepthook__)
    configure_app_log("cli")
    told: list[bool] = []
    assert install_crash_hook("cli", told.append)
    yield told
    uninstall_crash_hook()
    close_app_log()


def _log_text() -> str:
    for handler in logging.getLogger("app").handlers:
        handler.flush()
    path = app_log.app_log_path()
    assert path is not None
    return path.read_text(encoding="utf-8")


def _raise_here(message: str) -> None:
    try:
        raise RuntimeError(message)
    except RuntimeError:
        sys.excepthook(*sys.exc_info())


def test_the_traceback_goes_to_the_log_and_one_sentence_to_the_terminal(hooked, capsys):
    _raise_here("a slot failed")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "RuntimeError" not in err
    assert "Something went wrong inside gguf-launcher" in err and str(app_log.app_log_path()) in err
    log = _log_text()
    assert "Uncaught exception in thread MainThread" in log
    assert "Traceback (most recent call last)" in log and "RuntimeError: a slot failed" in log
    assert hooked == [True]


def test_another_threads_exception_is_logged_with_its_name(hooked, capsys):
    def fail() -> None:
        raise ValueError("a worker failed")

    worker = threading.Thread(target=fail, name="hash-worker")
    worker.start()
    worker.join(timeout=30)
    assert "Traceback" not in capsys.readouterr().err
    log = _log_text()
    assert "Uncaught exception in thread hash-worker" in log and "ValueError: a worker failed" in log


def test_a_burst_is_told_once_and_a_repeated_failure_is_counted_not_copied(hooked, capsys):
    for _ in range(5):
        _raise_here("fails on every paint")
    assert capsys.readouterr().err.count("Something went wrong") == 1
    assert hooked == [True]  # the window is told once too
    log = _log_text()
    assert log.count("RuntimeError: fails on every paint") == 1  # one traceback
    assert "2 times so far" in log and "4 times so far" in log and "3 times so far" not in log


def test_a_new_burst_is_told_again(hooked, capsys, monkeypatch):
    monkeypatch.setattr(app_log, "BURST_S", 0.0)
    _raise_here("first")
    _raise_here("second")
    assert capsys.readouterr().err.count("Something went wrong") == 2 and hooked == [True, True]


def test_ctrl_c_that_nothing_caught_is_not_an_error(hooked, capsys):
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        sys.excepthook(*sys.exc_info())
    assert capsys.readouterr().err == "" and hooked == []
    assert "Uncaught" not in _log_text()


def test_without_a_writable_log_the_terminal_keeps_the_details(app_home, monkeypatch, capsys):
    monkeypatch.setattr(sys, "excepthook", sys.__excepthook__)
    monkeypatch.setattr(threading, "excepthook", threading.__excepthook__)
    told: list[bool] = []
    assert install_crash_hook("cli", told.append)  # configure_app_log never ran: there is no log to write to
    try:
        _raise_here("no log folder")
    finally:
        uninstall_crash_hook()
    err = capsys.readouterr().err
    assert err.startswith("Something went wrong inside gguf-launcher, and the app log could not be written")
    assert "RuntimeError: no log folder" in err and told == [False]


def test_a_debugger_or_test_runner_keeps_its_own_hooks():
    before = (sys.excepthook, threading.excepthook)
    assert threading.excepthook is not threading.__excepthook__  # pytest watches threads
    assert not install_crash_hook("cli")
    assert (sys.excepthook, threading.excepthook) == before


def test_the_sentence_is_in_both_languages(tmp_path):
    sentence = app_log.crash_sentence(tmp_path / "gguf-launcher.log")
    assert str(tmp_path) in sentence.render("en") and str(tmp_path) in sentence.render("zh")
    assert "应用日志" in sentence.render("zh") and "gguf-launcher report" in sentence.render("zh")


def test_a_cli_command_that_raises_leaves_one_sentence_and_the_traceback_in_the_log(app_home):
    """A real command-line process whose command raises: exit 1, one line on stderr, the traceback in the log."""
    code = ("import app.cli.doctor as doctor\n"
            "def broken(args):\n"
            "    raise RuntimeError('doctor failed on purpose')\n"
            "doctor.run = broken\n"
            "from app.cli import main\n"
            "raise SystemExit(main(['doctor', 'model.gguf']))\n")
    result = subprocess.run([sys.executable, "-c", code], env=dict(os.environ), capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and "RuntimeError" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("Something went wrong inside gguf-launcher")
    log = (app_home / "log" / app_log.APP_LOG_NAME).read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in log and "RuntimeError: doctor failed on purpose" in log
