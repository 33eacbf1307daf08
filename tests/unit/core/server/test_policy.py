"""CrashPolicy alone, on a fake clock: the back-off between restarts, the crash-loop guard, and a fresh start
after a healthy run (no server, no threads, no sleeping)."""

from __future__ import annotations

import pytest

from app.core.server import policy as policy_module
from app.core.server.policy import DEFAULT_BACKOFF_S, CrashPolicy


class FakeClock:
    def __init__(self, now: float = 1000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    """The policy reads time.monotonic() when no ``now`` is given; this clock replaces it."""
    fake = FakeClock()
    monkeypatch.setattr(policy_module.time, "monotonic", fake)
    return fake


def test_back_off_doubles_and_then_stays_at_its_longest_step(clock):
    policy = CrashPolicy(max_crashes=10, window_s=60.0)
    delays = []
    for _ in range(5):
        policy.record_crash()
        delays.append(policy.next_delay())
        clock.advance(1.0)
    assert DEFAULT_BACKOFF_S == (0.5, 1.0, 2.0)
    assert delays == [0.5, 1.0, 2.0, 2.0, 2.0]


def test_before_any_crash_the_delay_is_the_first_step():
    assert CrashPolicy().next_delay() == 0.5
    assert CrashPolicy(backoff_s=(3.0, 7.0)).next_delay() == 3.0


def test_custom_back_off_and_an_empty_one_falls_back_to_the_default():
    policy = CrashPolicy(backoff_s=(0.1, 0.2), max_crashes=10)
    policy.record_crash(now=0.0)
    policy.record_crash(now=1.0)
    policy.record_crash(now=2.0)
    assert policy.next_delay() == 0.2
    assert CrashPolicy(backoff_s=()).backoff_s == DEFAULT_BACKOFF_S


def test_crash_loop_guard_stops_restarting_at_max_crashes_within_the_window(clock):
    policy = CrashPolicy(max_crashes=3, window_s=60.0)
    reasons = []
    for _ in range(3):
        policy.record_crash()
        reasons.append(policy.reason_not_to_restart(restartable=True))
        clock.advance(10.0)
    assert reasons == [None, None, "crash_loop"]
    assert policy.recent_crashes == 3


def test_crashes_spread_wider_than_the_window_are_not_a_loop(clock):
    policy = CrashPolicy(max_crashes=3, window_s=60.0)
    for _ in range(6):
        policy.record_crash()
        assert policy.reason_not_to_restart(restartable=True) is None
        clock.advance(45.0)  # the crash before last has left the window by the next one
    assert policy.recent_crashes == 2


def test_a_healthy_run_longer_than_the_window_starts_the_back_off_over(clock):
    policy = CrashPolicy(max_crashes=3, window_s=60.0)
    policy.record_crash()
    clock.advance(1.0)
    policy.record_crash()
    assert policy.next_delay() == 1.0
    clock.advance(61.0)  # ran well for longer than the window
    policy.record_crash()
    assert policy.recent_crashes == 1
    assert policy.next_delay() == 0.5
    assert policy.reason_not_to_restart(restartable=True) is None


def test_exactly_window_s_apart_still_counts_as_within_the_window():
    policy = CrashPolicy(max_crashes=2, window_s=60.0)
    policy.record_crash(now=0.0)
    policy.record_crash(now=60.0)
    assert policy.recent_crashes == 2 and policy.reason_not_to_restart(True) == "crash_loop"


def test_reset_after_a_manual_start_forgets_the_loop(clock):
    policy = CrashPolicy(max_crashes=2, window_s=60.0)
    policy.record_crash()
    policy.record_crash()
    assert policy.reason_not_to_restart(restartable=True) == "crash_loop"
    policy.reset()  # the supervisor does this on start() and restart()
    assert policy.recent_crashes == 0
    assert policy.reason_not_to_restart(restartable=True) is None
    policy.record_crash()
    assert policy.next_delay() == 0.5


def test_reasons_not_to_restart_come_in_order():
    off = CrashPolicy(auto_restart=False, max_crashes=1)
    off.record_crash(now=0.0)
    assert off.reason_not_to_restart(restartable=False) == "auto_restart_off"
    on = CrashPolicy(max_crashes=1)
    on.record_crash(now=0.0)
    assert on.reason_not_to_restart(restartable=False) == "not_restartable"
    assert on.reason_not_to_restart(restartable=True) == "crash_loop"
