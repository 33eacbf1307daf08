"""Keeping the screen awake: the inhibitor each platform offers, held while presenting and released after; where it
cannot run, a sentence that says what to do instead."""

from __future__ import annotations

import sys

import psutil

from app.core.presenter import awake
from app.core.presenter.awake import ScreenAwake, inhibit_command


def test_the_platforms_inhibitors():
    found = {"systemd-inhibit": "/usr/bin/systemd-inhibit", "caffeinate": "/usr/bin/caffeinate"}.get
    linux = inhibit_command("linux", which=found)
    assert linux[:2] == ["systemd-inhibit", "--what=idle:sleep"] and linux[-2:] == ["sleep", "infinity"]
    assert inhibit_command("darwin", which=found, pid=42) == ["caffeinate", "-d", "-i", "-w", "42"]
    assert inhibit_command("linux", which=lambda _name: None) is None


def test_a_held_inhibitor_is_released_by_stop(monkeypatch):
    monkeypatch.setattr(awake, "inhibit_command", lambda: [sys.executable, "-c", "import time; time.sleep(60)"])
    screen = ScreenAwake()
    assert screen.start() and screen.active
    pid = screen._child.pid
    screen.stop()
    assert not screen.active and not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_an_inhibitor_that_ends_at_once_is_said_in_plain_words(monkeypatch, caplog):
    """systemd-inhibit without a system bus says "Failed to connect to bus: No such file or directory": the
    checklist says what that means and what to do, in both languages; the system's words go to the log only."""
    raw = "Failed to connect to bus: No such file or directory"
    monkeypatch.setattr(awake, "inhibit_command", lambda: [sys.executable, "-c", f"import sys; sys.exit({raw!r})"])
    monkeypatch.setattr(awake, "STARTUP_S", 60.0)  # the stand-in is a Python child whose own start took more than
    # 0.5 s on a loaded machine (then it looked like a held lock); it ends at once, and the wait with it
    screen = ScreenAwake()
    with caplog.at_level("INFO", logger=awake.__name__):
        assert not screen.start() and not screen.active
    english, chinese = screen.unavailable_reason.render("en"), screen.unavailable_reason.render("zh")
    assert english == ("This computer could not be kept awake automatically: no desktop session service answers the "
                       "app's request (common in a container or on a computer without a full desktop). Turn off "
                       "screen sleep in the system settings for the talk.")
    assert chinese.startswith("无法自动让这台电脑保持唤醒：没有桌面会话服务响应") and "关闭屏幕休眠" in chinese
    assert all("bus" not in text and "No such file" not in text for text in (english, chinese))
    assert raw in caplog.text


def test_any_other_refusal_is_said_without_the_systems_words(monkeypatch):
    monkeypatch.setattr(awake, "inhibit_command", lambda: [sys.executable, "-c", "import sys; sys.exit('EPERM 0x1f')"])
    monkeypatch.setattr(awake, "STARTUP_S", 60.0)  # the stand-in is a Python child whose own start took more than
    # 0.5 s on a loaded machine (then it looked like a held lock); it ends at once, and the wait with it
    screen = ScreenAwake()
    assert not screen.start()
    for lang in ("en", "zh"):
        text = screen.unavailable_reason.render(lang)
        assert "EPERM" not in text and ("system settings" in text or "系统设置" in text)


def test_no_inhibitor_at_all_is_said(monkeypatch):
    monkeypatch.setattr(awake, "inhibit_command", lambda: None)
    monkeypatch.setattr(sys, "platform", "linux")
    screen = ScreenAwake()
    assert not screen.start() and "turn off screen sleep" in screen.unavailable_reason.render("en")


def test_this_machine_either_holds_it_or_says_why():
    screen = ScreenAwake()
    try:
        held = screen.start()
        assert held == screen.active and (held or screen.unavailable_reason is not None)
    finally:
        screen.stop()
    assert not screen.active
