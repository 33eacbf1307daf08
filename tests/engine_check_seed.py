"""Every test's isolated app home starts with this processor's real engine self-test results.

The self-test (quantize a tiny model, load it, generate) runs once per session for both engines: the built-in one
and the llama-server the set-up installed, the default engine (as the app's set-up runs it); each
test's fresh home gets a copy of its cache files, so `doctor` and the Machine step read a real result instead
of spending seconds re-running it in every test. A test that wants no result deletes the file.

The self-test takes about 3 s of child processes. It starts in its own child as the session starts, so it runs
alongside collection (which keeps the other core busy) instead of before the first test; the first test that
needs it waits for it. Under pytest-xdist (the fast lane) the controller starts the one self-test and every worker
waits for its outcome file: one self-test per run, not one per worker competing with the workers' collection."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

SEEDED = ("engine-check.json", "isa-probe.json")
ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 300  # a cold quantize + load on 2 busy cores takes seconds; this is only a guard against a hang
OUTCOME = "outcome.json"  # in the seed's home, written whole (renamed into place) once the self-test ended
SHARED_HOME = "engine_check_seed_home"  # the key of the seed's home in each pytest-xdist worker's workerinput
_SEED = """
import json
from app.core.engine import isa_cache, selftest
from app.core.server.engine_check import run_check
isa_cache.current_report()
from app.core.engine.shipped import shipped_llama_server
server = shipped_llama_server()
checks = [selftest.run_embedded_check()] + ([run_check("llama-server", str(server))] if server else [])
print(json.dumps({"ok": all(c.ok for c in checks) and server is not None, "check": [c.to_dict() for c in checks]}))
"""


class _Seed:
    """The self-test child: its own app home, and its own process group (it starts children of its own)."""

    def __init__(self) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="gguf-launcher-engine-check-"))
        env = dict(os.environ, GGUF_LAUNCHER_HOME=str(self.home))
        self.proc = subprocess.Popen([sys.executable, "-c", _SEED], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, start_new_session=True)
        self._sharer: threading.Thread | None = None

    def wait(self) -> Path:
        """The seeded cache folder, once the self-test passed (a failure that says why otherwise)."""
        outcome = self.outcome()
        if "error" in outcome:
            pytest.fail(outcome["error"], pytrace=False)
        return Path(outcome["cache"])

    def outcome(self) -> dict[str, str]:
        """{"cache": folder} once the self-test passed, else {"error": what went wrong}."""
        try:
            out, err = self.proc.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._kill()
            return {"error": f"the engine self-test did not finish within {TIMEOUT_S} s"}
        try:
            result = json.loads(out.strip().splitlines()[-1])
        except (IndexError, ValueError):
            return {"error": f"the engine self-test child failed (exit {self.proc.returncode}): {err[-3000:]}"}
        if not result["ok"]:
            return {"error": f"an engine fails its self-test on this processor, or llama-server is missing: "
                             f"{result['check']}"}
        return {"cache": str(self.home / "cache")}

    def share(self) -> None:
        """For pytest-xdist's workers: the outcome goes to a file in the seed's home once the self-test ends."""
        def write() -> None:
            partial = self.home / (OUTCOME + ".part")
            partial.write_text(json.dumps(self.outcome()), encoding="utf-8")
            partial.replace(self.home / OUTCOME)

        self._sharer = threading.Thread(target=write, name="engine-check-seed", daemon=True)
        self._sharer.start()

    def _kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass

    def stop(self) -> None:
        self._kill()
        if self._sharer is not None:  # its communicate() ends once the killed child's pipes close
            self._sharer.join(timeout=30)
        self.proc.wait()
        for pipe in (self.proc.stdout, self.proc.stderr):  # closed by communicate() only when it was waited for
            if pipe is not None:
                pipe.close()

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.home, ignore_errors=True)


_seed: _Seed | None = None


def _is_controller(config) -> bool:
    """pytest-xdist's controller: it runs no test, its workers do."""
    return getattr(config.option, "dist", "no") != "no" and not hasattr(config, "workerinput")


def _shared_home(config) -> Path | None:
    """In a pytest-xdist worker: the home of the controller's self-test."""
    home = getattr(config, "workerinput", {}).get(SHARED_HOME)
    return Path(home) if home else None


def pytest_sessionstart(session) -> None:
    global _seed
    config = session.config
    if config.option.collectonly or _shared_home(config) is not None:
        return
    _seed = _Seed()
    if _is_controller(config):
        _seed.share()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """pytest-xdist's controller, as it starts each worker: the worker waits for this self-test, runs none."""
    if _seed is not None:
        node.workerinput[SHARED_HOME] = str(_seed.home)


def pytest_sessionfinish(session) -> None:
    global _seed
    if _seed is not None:
        _seed.remove()
        _seed = None


def _wait_for_shared(home: Path) -> Path:
    deadline = time.monotonic() + TIMEOUT_S + 10  # the controller's own guard ends the self-test before this one
    while not (home / OUTCOME).is_file():
        if time.monotonic() > deadline:
            pytest.fail(f"the engine self-test left no outcome in {home} within {TIMEOUT_S} s", pytrace=False)
        time.sleep(0.05)
    outcome = json.loads((home / OUTCOME).read_text(encoding="utf-8"))
    if "error" in outcome:
        pytest.fail(outcome["error"], pytrace=False)
    return Path(outcome["cache"])


@pytest.fixture(scope="session")
def engine_check_home(request) -> Path:
    global _seed
    shared = _shared_home(request.config)
    if shared is not None:
        return _wait_for_shared(shared)
    if _seed is None:  # pytest_sessionstart did not run here (this file loaded late): start it now
        _seed = _Seed()
    return _seed.wait()


@pytest.fixture(autouse=True)
def seeded_engine_check(app_home, engine_check_home) -> None:
    cache = app_home / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    for name in SEEDED:
        if (engine_check_home / name).is_file():
            shutil.copy2(engine_check_home / name, cache / name)
