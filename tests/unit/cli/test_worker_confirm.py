"""`worker` on an address other computers can reach asks first: y/N at a terminal, --yes in a script; without a
terminal and without --yes it refuses in one sentence with the next step (it used to warn and start anyway).

Children in their own process group, killed with it, so a regression that starts a worker leaves none behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from app.core.launch.ports import find_free_port
from tests.paths import ROOT

pytestmark = [pytest.mark.slow,  # an app child each, and a real rpc-server for --yes: seconds
              pytest.mark.skipif(sys.platform == "win32", reason="terminals via pty are POSIX")]
DEADLINE_S = 60
REACHABLE = "0.0.0.0"  # what the user types to share; each test stops it within seconds


def _worker(*args: str, stdin) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "app", "worker", "--host", REACHABLE, "--port",
                             str(find_free_port()), "--json", *args], cwd=ROOT, stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _finish(proc: subprocess.Popen, *, interrupt: bool = False) -> tuple[list[dict], str]:
    try:
        if interrupt:
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"the worker did not end within {DEADLINE_S} s (it was started without asking)")
    return [json.loads(line) for line in out.splitlines()], err


def test_without_a_terminal_and_without_yes_it_refuses_in_one_sentence():
    events, err = _finish(_worker(stdin=subprocess.DEVNULL))
    assert [e["event"] for e in events] == ["warning", "error"]
    error = events[1]["error"]
    assert error["message"].startswith("The worker was not started: it would listen on 0.0.0.0:")
    assert "there is no terminal to ask you first." in error["message"]
    assert error["fix"] == "Run it again with --yes to share it anyway, or without --host to keep it on this " \
                               "computer."
    assert err.startswith("error: The worker was not started") and "Traceback" not in err


@pytest.mark.parametrize("answer", ["n", ""])
def test_at_a_terminal_anything_but_y_does_not_start_it(answer):
    import pty

    main, terminal = pty.openpty()
    try:
        proc = _worker(stdin=terminal)
        os.write(main, f"{answer}\n".encode())
        events, err = _finish(proc)
    finally:
        os.close(main)
        os.close(terminal)
    assert [e["event"] for e in events] == ["warning", "error"] and proc.returncode == 1
    assert "Share this computer as a worker on 0.0.0.0:" in err and "[y/N]" in err
    assert events[1]["error"]["message"] == "The worker was not started."


def test_yes_at_the_terminal_or_on_the_command_line_starts_it():
    import pty

    main, terminal = pty.openpty()
    try:
        proc = _worker(stdin=terminal)
        os.write(main, b"y\n")
        first = [json.loads(proc.stdout.readline()) for _ in range(2)]
        _finish(proc, interrupt=True)
    finally:
        os.close(main)
        os.close(terminal)
    assert [e["event"] for e in first] == ["warning", "ready"] and first[1]["check"]["usable"]
    proc = _worker("--yes", stdin=subprocess.DEVNULL)
    first = [json.loads(proc.stdout.readline()) for _ in range(2)]
    _finish(proc, interrupt=True)
    assert [e["event"] for e in first] == ["warning", "ready"] and first[1]["check"]["usable"]
