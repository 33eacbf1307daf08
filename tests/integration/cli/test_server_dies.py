"""The model server is killed (SIGKILL) at the worst moments under every CLI command that starts one.

Each command runs as a real child process (`python -m app ...`, its own GGUF_LAUNCHER_HOME) against a real server
(llama-cpp-python's or llama-server). The server is killed the moment the command's supervisor has marked it ready,
so the kill lands right after readiness, in the command's first requests, in a chat stream or in the probe's test
prompt. Every time: exit code 1, no Python traceback, the crash diagnosis' sentence and a next step, and no server
process and no pid file left behind. Also: a server killed while `serve` stops it on Ctrl-C (exit 0, still clean),
and `selftest --url` losing a server it did not start.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from tests.paths import ROOT

pytestmark = pytest.mark.slow

BACKENDS = ["embedded", "llama-server"]
COMMAND_WAIT_S = 300.0  # a busy 2-core machine loads the embedded server slowly; the waits end on events
GONE_WAIT_S = 15.0
# the supervisor's own line in the server log, written before anyone waiting for READY is woken
READY_LINE = re.compile(r"\[app\] state ready: .*:(\d+)\.?$")
# the crash diagnosis' sentence for a SIGKILL (memory fine, nothing known, signs that memory ran out)
KILL_CAUSES = ("The server was stopped from outside", "The server was killed",
               "stopped by the system because the computer ran out of memory")


class Command:
    """A `python -m app ...` child; stdout lines and stderr are collected on threads (no pipe can fill up)."""

    def __init__(self, home: Path, *args: str, unbuffered: bool = False):
        env = {**os.environ, "PYTHONPATH": str(ROOT), "GGUF_LAUNCHER_HOME": str(home), "GGUF_LAUNCHER_LANG": "en"}
        if unbuffered:  # each printed line arrives at once, so the test can act on it
            env["PYTHONUNBUFFERED"] = "1"
        self.proc = subprocess.Popen([sys.executable, "-m", "app", *args], cwd=ROOT, env=env, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines: list[str] = []
        self._err: list[str] = []
        self._cond = threading.Condition()
        self._threads = [threading.Thread(target=self._drain, args=(self.proc.stdout, self.lines), daemon=True),
                         threading.Thread(target=self._drain, args=(self.proc.stderr, self._err), daemon=True)]
        for thread in self._threads:
            thread.start()

    def _drain(self, pipe, into: list[str]) -> None:
        with pipe:  # closed at its end, not when the garbage collector gets to it (a ResourceWarning)
            for line in pipe:
                with self._cond:
                    into.append(line)
                    self._cond.notify_all()

    def json_event(self, predicate, timeout: float = COMMAND_WAIT_S) -> dict:
        """The first JSON line on stdout that ``predicate`` accepts."""
        return json.loads(self.line(lambda line: predicate(json.loads(line)), timeout))

    def line(self, predicate, timeout: float = COMMAND_WAIT_S) -> str:
        """The first stdout line that ``predicate`` accepts."""
        seen = 0
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for line in self.lines[seen:]:
                    if predicate(line):
                        return line
                seen = len(self.lines)
                if self.proc.poll() is not None and all(not t.is_alive() for t in self._threads):
                    raise AssertionError(f"the command ended without that event: {self.output()}")
                if time.monotonic() > deadline:
                    raise AssertionError(f"no such event within {timeout} s: {self.output()}")
                self._cond.wait(0.5)

    def finish(self, timeout: float = COMMAND_WAIT_S) -> tuple[int, str, str]:
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            raise AssertionError(f"the command did not end within {timeout} s: {self.output()}") from None
        for thread in self._threads:
            thread.join(10)
        return code, "".join(self.lines), "".join(self._err)

    def output(self) -> str:
        with self._cond:
            return "".join(self.lines) + "".join(self._err)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


class KillWhenReady(threading.Thread):
    """SIGKILLs every server the command starts, each the moment the command's supervisor marked it ready (its
    "[app] state ready" line in a log under GGUF_LAUNCHER_HOME); the pid is the child registry's record for that
    port. Also notes every server pid the registry ever showed."""

    def __init__(self, home: Path):
        super().__init__(name="kill-when-ready", daemon=True)
        self.logs = home / "log"
        self.registry = home / "data" / "children"
        self.killed: list[int] = []
        self.seen: set[int] = set()
        self._halt = threading.Event()
        self._offsets: dict[Path, int] = {}
        self._partial: dict[Path, str] = {}
        self._ready_ports: list[int] = []

    def run(self) -> None:
        while not self._halt.is_set():
            servers = self._servers()
            self._read_ready_ports()
            for port in list(self._ready_ports):
                pid = servers.get(port)
                if pid is None:
                    continue
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.killed.append(pid)
                self._ready_ports.remove(port)
            self._halt.wait(0.01)

    def stop(self) -> None:
        self._halt.set()
        self.join(10)

    def _servers(self) -> dict[int, int]:
        """port -> pid of the servers registered right now."""
        found = {}
        for pid, argv in registered_servers(self.registry.parent.parent).items():
            self.seen.add(pid)
            if "--port" in argv:
                found[int(argv[argv.index("--port") + 1])] = pid
        return found

    def _read_ready_ports(self) -> None:
        for log in self.logs.glob("*.log") if self.logs.is_dir() else ():
            with open(log, encoding="utf-8", errors="replace") as handle:
                handle.seek(self._offsets.get(log, 0))
                text = self._partial.get(log, "") + handle.read()
                self._offsets[log] = handle.tell()
            *lines, self._partial[log] = text.split("\n")
            for line in lines:
                match = READY_LINE.search(line.rstrip())
                if match:
                    self._ready_ports.append(int(match.group(1)))


def registered_servers(home: Path) -> dict[int, list[str]]:
    """pid -> command line of each server in the child registry of this GGUF_LAUNCHER_HOME right now."""
    registry = home / "data" / "children"
    found = {}
    for record in registry.glob("*.json") if registry.is_dir() else ():
        try:
            data = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # gone or being replaced at this very moment
        found[int(data["pid"])] = list(data["cmdline"])
    return found


def servers_running(model: Path) -> list[psutil.Process]:
    """Live processes whose command line names this test's own copy of the model (the servers started for it)."""
    alive = []
    for process in psutil.process_iter(["cmdline", "status"]):
        if process.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        if any(str(model) in part for part in process.info["cmdline"] or ()):
            alive.append(process)
    return alive


def assert_nothing_left(model: Path, home: Path, pids: set[int]) -> None:
    deadline = time.monotonic() + GONE_WAIT_S
    while (survivors := servers_running(model)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert survivors == [], f"servers outlived the command: {[p.info['cmdline'] for p in survivors]}"
    for pid in pids:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE, pid
    assert list((home / "data" / "children").glob("*.json")) == [], "a pid file was left behind"


def assert_plain_failure(code: int, out: str, err: str) -> None:
    assert "Traceback" not in out + err, out + err
    assert code == 1, out + err
    assert any(cause in out + err for cause in KILL_CAUSES), out + err


def server_args(backend: str, request) -> list[str]:
    if backend == "llama-server":
        return ["--backend", "llama-server", "--server-bin", request.getfixturevalue("llama_server_bin")]
    return ["--backend", "embedded"]


@pytest.fixture
def model(tiny_model, tmp_path) -> Path:
    """The tiny model under a path of this test's own, so that any server left running for it can be found."""
    copy = tmp_path / "dying.gguf"
    shutil.copyfile(tiny_model, copy)
    return copy


# -- serve -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_serve_json_when_the_server_is_killed_right_after_ready(backend, model, app_home, request):
    command = Command(app_home, "serve", str(model), *server_args(backend, request), "--ctx", "512",
                      "--no-restart", "--json")
    try:
        ready = command.json_event(lambda e: e["event"] == "state" and e["state"] in ("ready", "failed"))
        assert ready["state"] == "ready", command.output()
        os.kill(ready["pid"], signal.SIGKILL)
        code, out, err = command.finish()
    finally:
        command.kill()
    events = [json.loads(line) for line in out.splitlines()]  # only JSON on stdout, nothing else
    crash = next(e for e in events if e["event"] == "crash")
    assert crash["pid"] == ready["pid"] and crash["signal"] == "SIGKILL"
    assert crash["diagnosis"]["cause"] == "killed_from_outside" and crash["diagnosis"]["fix_hint"]
    assert crash["diagnosis"]["fix"] == {}  # killed with memory to spare: no setting changes
    assert_plain_failure(code, crash["diagnosis"]["message"], err)
    states = [e["state"] for e in events if e["event"] == "state"]
    assert states[states.index("ready"):] == ["ready", "crashed", "failed", "stopped"], states
    assert_nothing_left(model, app_home, {ready["pid"]})


def test_serve_gives_up_after_the_server_is_killed_after_every_restart(model, app_home, request):
    killer = KillWhenReady(app_home)
    killer.start()
    command = Command(app_home, "serve", str(model), *server_args("llama-server", request), "--ctx", "512")
    try:
        code, out, err = command.finish()
    finally:
        command.kill()
        killer.stop()
    assert_plain_failure(code, out, err)
    assert len(killer.killed) == 3, (killer.killed, out)  # the crash-loop guard stops after three crashes
    assert out.count("  next step: ") == 3 and "The server could not be kept running." in out
    assert_nothing_left(model, app_home, killer.seen)


def test_serve_stopped_with_ctrl_c_while_its_server_is_killed(model, app_home, request):
    command = Command(app_home, "serve", str(model), *server_args("llama-server", request), "--ctx", "512", "--json")
    try:
        ready = command.json_event(lambda e: e["event"] == "state" and e["state"] in ("ready", "failed"))
        assert ready["state"] == "ready", command.output()
        command.proc.send_signal(signal.SIGINT)
        os.kill(ready["pid"], signal.SIGKILL)  # dies while `serve` is stopping it
        code, out, err = command.finish()
    finally:
        command.kill()
    assert "Traceback" not in out + err and code == 0, out + err
    assert json.loads(out.splitlines()[-1])["state"] == "stopped"
    assert_nothing_left(model, app_home, {ready["pid"]})


# -- selftest ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend, as_json", [("embedded", False), ("llama-server", False), ("llama-server", True)])
def test_selftest_when_the_server_is_killed_right_after_ready(backend, as_json, model, app_home, request):
    killer = KillWhenReady(app_home)
    killer.start()
    command = Command(app_home, "selftest", str(model), *server_args(backend, request), "--ctx", "512",
                      "--rounds", "50", *(["--json"] if as_json else []))
    try:
        code, out, err = command.finish()
    finally:
        command.kill()
        killer.stop()
    assert len(killer.killed) == 1, (killer.killed, out, err)
    assert_plain_failure(code, out, err)
    doc = json.loads(out) if as_json else None
    if doc is not None and "error" in doc:  # before the first round: one JSON error object, sentence and next step
        assert doc["error"]["message"] and doc["error"]["fix"], doc
    elif doc is not None:  # the kill landed in a round: the report says which, with the diagnosis
        report = doc
        failed = report["rounds"][-1]
        assert not report["passed"] and report["skipped_rounds"] == 51 - len(report["rounds"])
        assert failed["error"]["kind"] == "server_crashed"
        assert failed["error"]["diagnosis"]["cause"] in ("killed", "killed_from_outside", "oom_killed")
    else:
        assert "next step: " in err or ("       -> " in out and "round(s) were not run" in out), out + err
    assert_nothing_left(model, app_home, killer.seen)


@pytest.mark.parametrize("backend", BACKENDS)
def test_selftest_when_the_server_is_killed_between_rounds(backend, model, app_home, request):
    command = Command(app_home, "selftest", str(model), *server_args(backend, request), "--ctx", "512",
                      "--rounds", "50", unbuffered=True)
    try:
        command.line(lambda line: line.startswith("[ok  ] round 1:"))
        (pid,) = registered_servers(app_home)
        os.kill(pid, signal.SIGKILL)  # lands in round 2's request or stream, or just before it
        code, out, err = command.finish()
    finally:
        command.kill()
    assert_plain_failure(code, out, err)
    failed = [line for line in out.splitlines() if line.startswith("[FAIL]")]
    assert len(failed) == 1 and "[server_crashed]" in failed[0] and any(c in failed[0] for c in KILL_CAUSES), out
    assert "       -> " in out and "round(s) were not run" in out and "Self-test failed" in out
    assert_nothing_left(model, app_home, {pid})


def test_selftest_url_when_the_server_it_uses_is_killed_between_rounds(running_server, app_home):
    server = running_server("llama-server")  # not started by the command: no crash report, just a lost connection
    command = Command(app_home, "selftest", "--url", server.url, "--api-key", server.api_key, "--rounds", "50",
                      unbuffered=True)  # another program on this computer: it connects with the key
    try:
        command.line(lambda line: line.startswith("[ok  ] round 1:"))
        server.child.kill()
        code, out, err = command.finish()
    finally:
        command.kill()
    assert "Traceback" not in out + err and code == 1, out + err
    failed = [line for line in out.splitlines() if line.startswith("[FAIL]")]
    assert len(failed) == 1 and ("[server_crashed]" in failed[0] or "[unreachable]" in failed[0]), out
    assert "       -> " in out and "round(s) were not run" in out and "Self-test failed" in out


# -- probe -------------------------------------------------------------------------------------------------------
@pytest.fixture
def slow_model(make_model) -> Path:
    """Large enough (~150 MB, f32) that the probe's test prompt is still running when its server is killed; with
    the tiny model the prompt could be answered before the kill lands, and the attempt would pass."""
    return make_model("dying.gguf", n_layers=4, n_embd=768, n_head=12, n_head_kv=12, n_ff=3072)


@pytest.mark.parametrize("backend", BACKENDS)
def test_probe_when_every_server_is_killed_right_after_ready(backend, slow_model, app_home, request):
    killer = KillWhenReady(app_home)
    killer.start()
    command = Command(app_home, "probe", str(slow_model), *server_args(backend, request), "--ctx", "256",
                      "--no-cache")
    try:
        code, out, err = command.finish()
    finally:
        command.kill()
        killer.stop()
    assert killer.killed, (out, err)
    assert_plain_failure(code, out, err)
    assert "test prompt failed" not in err, err  # a crash is told in the diagnosis' words, not as an HTTP error
    assert "No setting passed" in out and "next step: " in out
    assert_nothing_left(slow_model, app_home, killer.seen)
