"""No orphan ever: the child dies with the app (even on SIGKILL); stale children are found and killed safely."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

from app.core.launch.ports import find_free_port
from app.core.process import registry as child_registry
from tests.paths import ROOT

APP_SCRIPT = """
import sys, time
from app.core.launch.config import LaunchConfig
from app.core.server.supervisor import State, Supervisor
config = LaunchConfig(model=sys.argv[1], backend="llama-server", server_bin=sys.argv[2], port=int(sys.argv[3]),
                      ctx=512, threads=1)
supervisor = Supervisor(config, backoff_s=(0.05,))
supervisor.start()
assert supervisor.wait_for(State.READY, 60) is State.READY
print(supervisor.pid, flush=True)
time.sleep(600)
"""


def dead(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def wait_dead(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if dead(pid):
            return True
        time.sleep(0.05)
    return False


def test_child_dies_when_the_app_is_killed(tiny_model, llama_server_bin, app_home):
    with subprocess.Popen([sys.executable, "-c", APP_SCRIPT, str(tiny_model), llama_server_bin,
                           str(find_free_port())], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}) as app:  # its pipe closed on the way out
        try:
            child_pid = int(app.stdout.readline())
            assert psutil.Process(child_pid).ppid() == app.pid
            app.send_signal(signal.SIGKILL)
            app.wait(10)
            assert wait_dead(child_pid), "llama-server outlived the app that started it"
        finally:
            app.kill()
            app.wait(10)
    assert child_registry.find_stale_children() == []
    assert list(child_registry.registry_dir().glob("*.json")) == []  # its dead record was cleaned up


def _record_as_orphan(record: Path, create_time_shift: float = 0.0) -> None:
    data = json.loads(record.read_text())
    data["owner_pid"], data["owner_create_time"] = 999_999_999, 1.0  # an app that no longer exists
    data["create_time"] += create_time_shift
    record.write_text(json.dumps(data))


def test_stale_child_is_found_and_killed_but_a_reused_pid_is_not(app_home):
    argv = [sys.executable, "-c", "import time; time.sleep(60)"]
    stale = subprocess.Popen(argv)
    bystander = subprocess.Popen(argv)
    try:
        record = child_registry.register(stale.pid, psutil.Process(stale.pid).create_time(), argv)
        _record_as_orphan(record)
        reused = child_registry.register(bystander.pid, psutil.Process(bystander.pid).create_time(), argv)
        _record_as_orphan(reused, create_time_shift=-100.0)  # same pid number, different process

        found = child_registry.find_stale_children()
        assert [child.pid for child in found] == [stale.pid]
        assert child_registry.kill_stale_child(found[0]) is True
        assert stale.wait(5) is not None
        assert bystander.poll() is None and not reused.exists() and not record.exists()
    finally:
        for process in (stale, bystander):
            process.kill()
            process.wait(5)


def test_records_of_a_live_app_are_not_stale(app_home):
    argv = [sys.executable, "-c", "import time; time.sleep(60)"]
    child = subprocess.Popen(argv)
    try:
        child_registry.register(child.pid, psutil.Process(child.pid).create_time(), argv)
        assert child_registry.find_stale_children() == []  # owned by this very (running) process
    finally:
        child.kill()
        child.wait(5)


def test_children_this_process_registered_but_never_stopped_are_stopped_on_the_way_out(app_home):
    """The CLI calls stop_own_children() last: an interrupt between a spawn and the supervisor's bookkeeping
    leaves neither the server nor its pid file behind."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        proc = psutil.Process(child.pid)
        deadline = time.monotonic() + 10
        while "time.sleep(120)" not in " ".join(proc.cmdline()) and time.monotonic() < deadline:
            time.sleep(0.01)  # right after fork the command line is still pytest's, until exec
        record = child_registry.register(child.pid, proc.create_time(), proc.cmdline())
        assert child_registry.stop_own_children() == 1
        assert child.wait(timeout=10) is not None
        assert not record.exists()
        assert child_registry.stop_own_children() == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
