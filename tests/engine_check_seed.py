"""Every test's isolated app home starts with this processor's real engine self-test results.

The self-test (quantize a tiny model, load it, generate) runs once per session for both engines: the built-in one
and the llama-server the set-up installed, the default engine (as the app's set-up runs it); each
test's fresh home gets a copy of its cache files, so `doctor` and the Machine step read a real result instead
of spending seconds re-running it in every test. A test that wants no result deletes the file.

The self-test takes about 3 s of child processes. It starts in its own child as the session starts, so it runs
alongside collection (which keeps the other core busy) instead of before the first test; the first test that
needs it waits for it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

SEEDED = ("engine-check.json", "isa-probe.json")
ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 300  # a cold quantize + load on 2 busy cores takes seconds; this is only a guard against a hang
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

    def wait(self) -> Path:
        """The seeded cache folder, once the self-test passed (a failure that says why otherwise)."""
        try:
            out, err = self.proc.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.stop()
            pytest.fail(f"the engine self-test did not finish within {TIMEOUT_S} s", pytrace=False)
        try:
            result = json.loads(out.strip().splitlines()[-1])
        except (IndexError, ValueError):
            pytest.fail(f"the engine self-test child failed (exit {self.proc.returncode}): {err[-3000:]}",
                        pytrace=False)
        assert result["ok"], f"an engine fails its self-test on this processor, or llama-server is missing: " \
                             f"{result['check']}"
        return self.home / "cache"

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self.proc.wait()
        for pipe in (self.proc.stdout, self.proc.stderr):  # closed by communicate() only when it was waited for
            if pipe is not None:
                pipe.close()

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.home, ignore_errors=True)


_seed: _Seed | None = None


def _runs_tests(config) -> bool:
    """Not only collecting, and not pytest-xdist's controller (its workers run the tests, each with its own seed)."""
    controller = getattr(config.option, "dist", "no") != "no" and not hasattr(config, "workerinput")
    return not config.option.collectonly and not controller


def pytest_sessionstart(session) -> None:
    global _seed
    if _runs_tests(session.config):
        _seed = _Seed()


def pytest_sessionfinish(session) -> None:
    global _seed
    if _seed is not None:
        _seed.remove()
        _seed = None


@pytest.fixture(scope="session")
def engine_check_home() -> Path:
    global _seed
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
