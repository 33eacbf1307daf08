"""A server left by an earlier, killed session of the app is found at start-up and stopped with one click."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil

from app.core.atomic import write_json_atomic
from app.core.process import registry as child_registry
from tests.ui.conftest import LONG


def _leave_a_stale_server() -> subprocess.Popen:
    """A real process registered as a server child whose owning app has exited (as after a crash of the app)."""
    server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    dead_app = subprocess.Popen([sys.executable, "-c", "pass"])
    dead_app.wait()
    proc = psutil.Process(server.pid)
    deadline = time.monotonic() + 10
    while "time.sleep(120)" not in " ".join(proc.cmdline()) and time.monotonic() < deadline:
        time.sleep(0.01)  # right after fork the command line is still pytest's, until exec
    write_json_atomic(child_registry.registry_dir() / f"{server.pid}.json", {
        "pid": server.pid, "create_time": proc.create_time(), "cmdline": proc.cmdline(), "started_at": time.time(),
        "owner_pid": dead_app.pid, "owner_create_time": 1.0,
    })
    return server


def test_window_offers_to_stop_a_server_left_by_an_earlier_session(qtbot, window):
    server = _leave_a_stale_server()
    try:
        banner = window.stale_servers
        banner.look_for_stale_servers()
        qtbot.waitUntil(banner.isVisible, timeout=LONG)
        assert str(server.pid) in banner.label.text()
        assert "earlier session" in banner.label.text()
        banner.stop_button.click()
        qtbot.waitUntil(lambda: server.poll() is not None, timeout=LONG)
        qtbot.waitUntil(lambda: "Stopped" in banner.label.text(), timeout=LONG)
        assert child_registry.find_stale_children() == []
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_nothing_is_shown_when_no_server_was_left_behind(qtbot, window):
    banner = window.stale_servers
    banner.look_for_stale_servers()
    qtbot.wait(300)
    assert not banner.isVisible()
