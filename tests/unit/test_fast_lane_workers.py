"""The fast lane gets parallel workers; every other run is left as typed (tests/workers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.workers import fast_lane_workers


@pytest.mark.parametrize("args, cpus, workers", [
    (["-m", "not slow"], 2, 2),
    (["-m", "not slow", "-q", "tests/unit"], 16, 4),
    (["-mnot slow"], 2, 2),
    (["-m", "not slow"], 1, 0),  # one core: workers would only add their start-up
    (["-m", "not slow", "-n", "0"], 2, 0),  # the user chose
    (["-m", "not slow", "-p", "no:xdist"], 2, 0),
    (["-m", "slow"], 2, 0),  # real servers and timing checks stay serial
    ([], 2, 0),  # the whole suite, as CI runs it
    (["tests/unit", "-q"], 2, 0),
])
def test_only_the_fast_lane_gets_workers(args, cpus, workers):
    assert fast_lane_workers(args, cpus) == workers


def test_this_run_has_the_plugin_loaded(pytestconfig):
    assert pytestconfig.pluginmanager.has_plugin("tests.workers")


def test_the_engine_self_test_runs_once_per_run(pytestconfig, engine_check_home):
    """Under pytest-xdist a worker runs no self-test of its own: it uses the controller's (tests/engine_check_seed.py);
    a run in one process has its own."""
    from tests import engine_check_seed

    shared = getattr(pytestconfig, "workerinput", {}).get(engine_check_seed.SHARED_HOME)
    if hasattr(pytestconfig, "workerinput"):
        assert shared and engine_check_home == Path(shared) / "cache" and engine_check_seed._seed is None
    else:
        assert engine_check_seed._seed is not None and engine_check_home == engine_check_seed._seed.home / "cache"
    assert all((engine_check_home / name).is_file() for name in engine_check_seed.SEEDED)
