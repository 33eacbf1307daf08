"""The fast lane gets parallel workers; every other run is left as typed (tests/workers.py)."""

from __future__ import annotations

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
