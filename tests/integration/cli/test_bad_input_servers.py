"""Newcomer mistakes that need a real server: a busy port for `serve`, and nothing left running afterwards."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import psutil

from tests.paths import ROOT


def gone(pid: int, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


def test_serve_on_a_busy_port_says_so_uses_another_and_leaves_nothing_behind(tiny_model, llama_server_bin):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        proc = subprocess.Popen([sys.executable, "-m", "app", "serve", str(tiny_model), "--backend", "llama-server",
                                 "--server-bin", llama_server_bin, "--port", str(taken), "--ctx", "512", "--json"],
                                cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        try:
            events = []
            for line in proc.stdout:
                events.append(json.loads(line))
                if events[-1]["event"] == "state" and events[-1]["state"] in ("ready", "failed"):
                    break
            starting = next(e for e in events if e.get("state") == "starting")
            ready = events[-1]
            assert ready["state"] == "ready", events
            assert any(f"Port {taken} is in use" in note for note in starting["notes"])
            assert not ready["url"].endswith(f":{taken}")
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
    assert proc.returncode == 0 and "Traceback" not in err
    assert gone(ready["pid"]), "the server outlived `serve`"


def test_a_terminated_selftest_stops_its_server_and_removes_its_pid_file(tiny_model, llama_server_bin, app_home):
    children = app_home / "data" / "children"
    proc = subprocess.Popen([sys.executable, "-m", "app", "selftest", str(tiny_model), "--backend", "llama-server",
                             "--server-bin", llama_server_bin, "--ctx", "512", "--rounds", "50"],
                            cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 60
        while not (children.is_dir() and any(children.glob("*.json"))) and time.monotonic() < deadline:
            time.sleep(0.05)
        server_pid = int(next(children.glob("*.json")).stem)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130 and "Traceback" not in err
    assert gone(server_pid, within_s=2.0), "the server outlived a terminated selftest"
    assert list(children.glob("*.json")) == []
