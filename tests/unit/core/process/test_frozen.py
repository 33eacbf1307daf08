"""Children that run the app's own code: `python -c` from source, the program re-launched in a packaged app."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from app.core.process import frozen
from app.core.process.frozen import CHILDREN, RUN_CHILD_SWITCH, child_argv, run_child
from tests.paths import ROOT


def test_from_source_a_child_is_python_running_the_named_function():
    argv = child_argv("cpu-feature", ["hex:90"])
    assert argv[:2] == [sys.executable, "-c"] and argv[-1] == "hex:90"
    assert "from app.core.engine.cpu_isa import _child" in argv[2]
    assert subprocess.run(argv, cwd=ROOT, capture_output=True, timeout=60).returncode == 0  # nop runs


def test_another_interpreter_is_used_when_given():
    assert child_argv("quantize", ["a", "b"], python="/opt/py/bin/python")[0] == "/opt/py/bin/python"


def test_a_packaged_app_relaunches_itself_with_the_switch(monkeypatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert child_argv("engine-selftest", ["Q4_0=/m.gguf"]) == [sys.executable, RUN_CHILD_SWITCH, "engine-selftest",
                                                              "Q4_0=/m.gguf"]
    assert child_argv("quantize", ["x"], python="/usr/bin/python3")[:2] == ["/usr/bin/python3", "-c"]


@pytest.mark.parametrize("name", sorted(CHILDREN))
def test_every_child_names_a_function_that_exists(name):
    import importlib

    module, function = CHILDREN[name].split(":")
    assert callable(getattr(importlib.import_module(module), function))


def test_run_child_refuses_a_name_it_does_not_know(capsys):
    assert run_child(["os:system", "true"]) == 2 and run_child([]) == 2
    assert "expected one of cpu-feature, demo-answer, engine-selftest, quantize" in capsys.readouterr().err


def _three_for_x(args: list[str]) -> int | None:
    return 3 if args == ["x"] else None


def test_run_child_passes_the_arguments_and_returns_the_status(monkeypatch):
    monkeypatch.setitem(frozen.CHILDREN, "three", f"{__name__}:_three_for_x")
    assert run_child(["three", "x"]) == 3 and run_child(["three"]) == 0


def test_a_packaged_app_gives_its_children_the_users_library_path(monkeypatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/app/_internal:/home/me/lib")
    monkeypatch.setenv("LD_LIBRARY_PATH_ORIG", "/home/me/lib")
    frozen.restore_library_path()
    assert os.environ["LD_LIBRARY_PATH"] == "/home/me/lib" and "LD_LIBRARY_PATH_ORIG" not in os.environ
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/app/_internal")  # the user had none
    frozen.restore_library_path()
    assert "LD_LIBRARY_PATH" not in os.environ


def test_from_source_the_library_path_is_left_alone(monkeypatch):
    monkeypatch.delattr(sys, "frozen", raising=False)
    monkeypatch.setenv("LD_LIBRARY_PATH", "/x")
    frozen.restore_library_path()
    assert os.environ["LD_LIBRARY_PATH"] == "/x"
