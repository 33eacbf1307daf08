"""Seed 001, bounded: a server whose memory grows steadily inside a memory cgroup is warned about, then restarted by
the watchdog before the kernel's OOM killer acts (the cgroup's oom_kill counter stays 0), and is READY again.

The growing child is the test-only fake llama-server in its ``grow`` mode (a real server cannot be made to leak on
purpose): it joins a real memory cgroup with a 256 MiB limit and writes 2 MiB every 0.1 s. Where this process may
not create a cgroup (not root), the same path is driven by the child's own RSS against a 256 MiB budget instead,
and the test says which one it ran.
"""

from __future__ import annotations

import threading

import psutil

from app.core.diagnosis.oom_evidence import read_counter
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.server.events import State
from app.core.server.supervisor import Supervisor
from app.core.server.watchdog import Level, MemoryReading, WatchdogLimits, read_server_memory
from tests.unit.core.diagnosis.test_oom_and_processes import memory_cgroup_for_test

LIMIT = 256 * 1024 * 1024
LIMITS = WatchdogLimits(interval_s=0.2, critical_samples=2)


def _rss_budget(pid: int | None) -> MemoryReading:
    rss = psutil.Process(pid).memory_info().rss if pid else 0
    return MemoryReading(rss, LIMIT, "test budget", rss)


def _run(fake_bin: str, tiny_model, extra_env: dict, read) -> dict:
    config = LaunchConfig(model=str(tiny_model), backend="llama-server", server_bin=fake_bin, port=find_free_port())
    supervisor = Supervisor(config, extra_env={"FAKE_LLAMA_GROW_MB": "2", **extra_env}, memory_watchdog=LIMITS)
    supervisor.watchdog.read = read
    events, ready_again = [], threading.Event()

    def record(event) -> None:
        events.append(event)
        if event.kind == "state" and event.state is State.READY and any(e.kind == "planned_restart" for e in events):
            ready_again.set()

    supervisor.subscribe(record)
    pids = []
    try:
        supervisor.start()
        assert supervisor.wait_for({State.READY, State.FAILED}, 30) is State.READY, supervisor.tail(20)
        pids.append(supervisor.pid)
        assert ready_again.wait(60), [e.to_dict() for e in events if e.kind != "log"]
        pids.append(supervisor.pid)
    finally:
        supervisor.close()
    return {"events": events, "pids": pids, "supervisor": supervisor}


def _check(result: dict) -> None:
    events, supervisor = result["events"], result["supervisor"]
    levels = [e.payload.level for e in events if e.kind == "memory"]
    assert levels[:2] == [Level.WARNING, Level.CRITICAL], levels  # warned first, then the restart
    planned = next(e for e in events if e.kind == "planned_restart")
    assert planned.payload.diagnosis.cause == "memory_watchdog"
    assert "restarted now" in planned.payload.diagnosis.message.render("en")
    assert supervisor.planned_restarts == 1 and supervisor.restart_count == 0  # not counted as a crash
    assert not any(e.kind == "crash" for e in events)
    ready = next(e for e in events if e.kind == "state" and e.state is State.READY and e.time > planned.time)
    first, second = result["pids"]
    assert first != second and not psutil.pid_exists(first) and not psutil.pid_exists(second)
    print(f"critical -> ready again: {ready.time - planned.time:.2f} s")


def test_a_growing_server_is_restarted_before_the_oom_killer(fake_server_bin, tiny_model):
    fake = fake_server_bin("grow")
    with memory_cgroup_for_test(LIMIT) as cgroup:
        if cgroup is None:
            print("no memory cgroup can be made here: watching the child's RSS against a 256 MiB budget")
            _check(_run(fake, tiny_model, {}, _rss_budget))
            return
        directory, counter = cgroup
        result = _run(fake, tiny_model, {"FAKE_LLAMA_CGROUP": str(directory)}, read_server_memory)
        _check(result)
        scopes = {e.payload.reading.scope for e in result["events"] if e.kind == "memory"}
        assert scopes == {"cgroup"}, scopes  # the cgroup's limit was the tighter one, and it was the one read
        assert read_counter(str(directory / counter), "oom_kill") == 0  # the kernel never had to kill


def test_a_second_planned_restart_soon_after_halves_the_context(running_server):
    """The same settings ran short twice within ten minutes: the second restart runs with half the context (the
    real llama-server, restarted on purpose twice), and its diagnosis says so."""
    from app.core.text import T

    supervisor = running_server("llama-server", ctx=2048)
    reason = T("Memory use reached 93 %.", "内存占用已达 93%。")
    assert supervisor.planned_restart(reason, {"percent": 93})
    assert supervisor.wait_for({State.READY, State.FAILED}, 60) is State.READY
    first = supervisor.last_diagnosis
    assert supervisor.config.ctx == 2048 and "smaller context or close" in first.next_step.render("en")
    assert supervisor.planned_restart(reason, {"percent": 94})
    assert supervisor.wait_for({State.READY, State.FAILED}, 60) is State.READY
    second = supervisor.last_diagnosis
    assert supervisor.config.ctx == 1024 and "2048 → 1024" in second.next_step.render("en")
    assert "2048 → 1024" in second.next_step.render("zh") and supervisor.planned_restarts == 2
    assert supervisor.restart_count == 0
