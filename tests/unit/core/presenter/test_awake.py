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


def test_an_inhibitor_that_ends_at_once_is_said_with_its_reason(monkeypatch):
    script = "import sys; print('Failed to connect to bus', file=sys.stderr); sys.exit(1)"
    monkeypatch.setattr(awake, "inhibit_command", lambda: [sys.executable, "-c", script])
    screen = ScreenAwake()
    assert not screen.start() and not screen.active
    assert "Failed to connect to bus" in screen.unavailable_reason.render("en")
    assert "system settings" in screen.unavailable_reason.render("en")


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
