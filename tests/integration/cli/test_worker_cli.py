"""`gguf-launcher worker` shares this computer until Ctrl-C and leaves nothing behind; `worker --check` and
`plan --rpc` see it (a real rpc-server on 127.0.0.1)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import psutil
import pytest

from app.core.launch.ports import find_free_port
from tests.paths import ROOT

pytestmark = pytest.mark.slow
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _app(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, env=ENV, text=True, capture_output=True,
                          timeout=120)


def test_share_check_plan_and_stop(llama_server_bin, tiny_model):
    port = find_free_port()
    proc = subprocess.Popen([sys.executable, "-m", "app", "worker", "--port", str(port), "--server-bin",
                             llama_server_bin, "--json"], cwd=ROOT, env=ENV, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        events = []
        for line in proc.stdout:
            events.append(json.loads(line))
            if events[-1]["event"] in ("ready", "crashed"):
                break
        warning, ready = events[0], events[-1]
        assert "Only programs on this computer" in warning["message"], events
        assert ready["event"] == "ready" and ready["address"] == f"127.0.0.1:{port}" and ready["check"]["usable"]
        checked = _app("worker", "--check", ready["address"])
        assert checked.returncode == 0 and "is ready" in checked.stdout
        plan = _app("plan", str(tiny_model), "--backend", "llama-server", "--server-bin", llama_server_bin,
                    "--rpc", ready["address"], "--json")
        data = json.loads(plan.stdout)
        assert data["devices"][0]["device"] == f"worker {ready['address']}" and data["workers"][0]["usable"]
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0 and "Traceback" not in err and '"stopped"' in out
    assert not psutil.pid_exists(ready["pid"]) or psutil.Process(ready["pid"]).status() == psutil.STATUS_ZOMBIE
