"""A packaged (frozen) app re-launches itself as the embedded server and as its own Python children (`--run-child`)."""

import subprocess
import sys

from app.core.launch import backends
from app.core.launch.config import EMBEDDED_SERVER_SWITCH


def test_frozen_app_relaunches_itself_as_embedded_server(monkeypatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert backends.embedded_server_prefix() == (sys.executable, EMBEDDED_SERVER_SWITCH)
    monkeypatch.delattr(sys, "frozen")
    assert backends.embedded_server_prefix() == (sys.executable, "-m", "app.core.launch.embedded_server")


def test_embedded_server_switch_runs_llama_cpp_server():
    result = subprocess.run([sys.executable, "-m", "app", EMBEDDED_SERVER_SWITCH, "--help"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "--n_ctx" in result.stdout and "--model" in result.stdout


def test_run_child_switch_runs_the_named_child():
    from app.core.process.frozen import RUN_CHILD_SWITCH

    nop = subprocess.run([sys.executable, "-m", "app", RUN_CHILD_SWITCH, "cpu-feature", "hex:90"],
                         capture_output=True, text=True, timeout=120)
    assert nop.returncode == 0, nop.stderr
    unknown = subprocess.run([sys.executable, "-m", "app", RUN_CHILD_SWITCH, "os:system"],
                             capture_output=True, text=True, timeout=120)
    assert unknown.returncode == 2 and "expected one of" in unknown.stderr
