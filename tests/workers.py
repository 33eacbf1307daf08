"""The fast lane (`./test -m "not slow"`) runs on several pytest-xdist workers; everything else runs in one process.

Loaded early (``-p tests.workers`` in pyproject's addopts), before the command line is parsed, so it can add
``-n``: the fast lane is ~1,000 small tests whose time is spread thin (no single file takes more than 7 s), so
only parallel workers bring it well under a minute on 2 cores. The slow lane and the whole suite stay serial: their
real servers and timing checks (a GUI stall under 250 ms, readiness within a deadline) are measured on a machine
that is not also running other tests. An explicit ``-n``/``-p no:xdist``, or a machine with one core, is left alone.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import sys

FAST_LANE = "not slow"
MAX_WORKERS = 4


def _marker_expression(args: list[str]) -> str | None:
    for i, arg in enumerate(args):
        if arg == "-m" and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("-m") and not arg.startswith("--"):
            return arg[2:].lstrip("=")
    return None


def _chooses_workers(args: list[str]) -> bool:
    return any(a in ("-n", "--numprocesses", "--dist") or a.startswith(("-n", "--numprocesses=", "--dist="))
               for a in args) or any(a == "no:xdist" or a == "-pno:xdist" for a in args)


def fast_lane_workers(args: list[str], cpus: int | None) -> int:
    """How many workers to add for these arguments (0: run as given)."""
    if _marker_expression(args) != FAST_LANE or _chooses_workers(args):
        return 0
    if importlib.util.find_spec("xdist") is None:
        return 0
    return min(MAX_WORKERS, cpus or 1) if (cpus or 1) >= 2 else 0


def pytest_load_initial_conftests(early_config, parser, args: list[str]) -> None:
    workers = fast_lane_workers(args, os.cpu_count())
    if workers:
        args[:] = [*args, "-n", str(workers)]


def pytest_configure(config) -> None:
    if hasattr(config, "workerinput"):  # a pytest-xdist worker
        atexit.register(_exit_without_teardown)


def _exit_without_teardown() -> None:
    """A worker's last act: its results went to the controller with its session's end, and the controller waits
    for the process to end. Python's own teardown of a worker (its Qt application and the objects ~1,100 tests left)
    took 1.3-2 s of that wait: the worker ends here instead, once the other exit handlers ran (registered after this
    one, they run before it) and its output is flushed."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(0)
