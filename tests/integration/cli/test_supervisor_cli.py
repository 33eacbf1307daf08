"""`gguf-launcher serve`: JSON events until Ctrl-C (exit 0), plain sentences for what cannot start (exit 1)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from app.core.launch.ports import find_free_port
from tests.paths import ROOT


def serve(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "app", "serve", *args], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            **kwargs)


def test_serve_json_runs_until_ctrl_c(tiny_model, llama_server_bin):
    port = find_free_port()
    proc = serve(str(tiny_model), "--backend", "llama-server", "--server-bin", llama_server_bin,
                 "--port", str(port), "--ctx", "512", "--json", "--logs")
    events = []
    try:
        for line in proc.stdout:
            events.append(json.loads(line))
            if events[-1].get("state") in ("ready", "failed") and events[-1]["event"] == "state":
                break
        ready = events[-1]
        assert ready["state"] == "ready" and ready["url"] == f"http://127.0.0.1:{port}" and ready["pid"] > 0
        assert any(event["event"] == "log" and event["stream"] in ("stdout", "stderr") for event in events)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    tail = [json.loads(line) for line in out.splitlines()]
    assert [e["state"] for e in tail if e["event"] == "state"][-2:] == ["stopping", "stopped"]


def test_serve_missing_binary_says_what_to_do(tiny_model, tmp_path):
    proc = serve(str(tiny_model), "--backend", "llama-server", "--server-bin", str(tmp_path / "llama-server"))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert "llama-server was not found" in err and "next step:" in err and "Traceback" not in err + out


def test_serve_missing_model_says_so(tmp_path):
    proc = serve(str(tmp_path / "nope.gguf"))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and "does not exist" in err and "Traceback" not in err


def test_serve_kill_stale_stops_a_server_left_by_a_crashed_session(tiny_model, llama_server_bin):
    import psutil

    from app.core.process import registry as child_registry

    argv = [sys.executable, "-c", "import time; time.sleep(60)"]
    leftover = subprocess.Popen(argv)
    try:
        record = child_registry.register(leftover.pid, psutil.Process(leftover.pid).create_time(), argv)
        data = json.loads(record.read_text())
        data["owner_pid"], data["owner_create_time"] = 999_999_999, 1.0  # its app is gone
        record.write_text(json.dumps(data))
        proc = serve(str(tiny_model), "--backend", "llama-server", "--server-bin", llama_server_bin,
                     "--port", str(find_free_port()), "--json", "--kill-stale")
        first = json.loads(proc.stdout.readline())
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
        assert first == {"event": "stale_child", "pid": leftover.pid, "cmdline": argv, "killed": True}
        assert leftover.wait(5) is not None
    finally:
        leftover.kill()
        leftover.wait(5)


def test_serve_json_reports_the_watchdog_at_levels_the_user_chose(tiny_model, llama_server_bin):
    """Levels set below what this machine already uses: the watchdog warns and restarts at once, as it would at
    92 % on a full machine; serve --json carries both as events and the server is ready again."""
    proc = serve(str(tiny_model), "--backend", "llama-server", "--server-bin", llama_server_bin,
                 "--port", str(find_free_port()), "--ctx", "512", "--json", "--memory-warn", "1",
                 "--memory-restart", "2")
    events = []
    try:
        for line in proc.stdout:
            events.append(json.loads(line))
            kinds = [e["event"] for e in events]
            if "planned_restart" in kinds and kinds[-1] == "state" and events[-1]["state"] == "ready":
                break
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    finally:
        proc.kill()
    memory = [e for e in events if e["event"] == "memory"]
    assert [e["level"] for e in memory][:2] == ["warning", "critical"], memory
    assert memory[0]["reading"]["percent"] >= 2 and "sentence" in memory[0]
    planned = next(e for e in events if e["event"] == "planned_restart")
    assert planned["diagnosis"]["cause"] == "memory_watchdog" and "restarted now" in planned["diagnosis"]["message"]
    assert proc.returncode == 0


def test_serve_refuses_a_restart_level_below_the_warning(tiny_model):
    proc = serve(str(tiny_model), "--memory-warn", "90", "--memory-restart", "80")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and "must be above the warning level" in err and "Traceback" not in err


def test_serve_without_an_engine_named_runs_the_installed_llama_server(tiny_model, llama_server_bin):
    import psutil

    proc = serve(str(tiny_model), "--port", str(find_free_port()), "--ctx", "512", "--json")
    try:
        for line in proc.stdout:
            event = json.loads(line)
            if event["event"] == "state" and event.get("state") in ("ready", "failed"):
                break
        assert event["state"] == "ready", event
        assert os.path.samefile(psutil.Process(event["pid"]).exe(), llama_server_bin)  # the default engine
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0 and "built-in engine" not in err, err
