"""Issue 22, point 1, with real servers under the Supervisor: a kill with memory to spare is "stopped from outside"
with Restart (twice, and the context never shrinks), and a real out-of-memory kill in a memory cgroup, with the
memory watchdog off, is still "out of memory" with the memory fix. The evidence on both cards is the memory's."""

from __future__ import annotations

import os
import signal
import threading

import psutil
import pytest

from app.core.diagnosis import MemorySample
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.problem import change_settings
from app.core.server.events import State
from app.core.server.supervisor import Supervisor
from tests.unit.core.diagnosis.test_oom_and_processes import memory_cgroup_for_test

pytestmark = pytest.mark.slow  # real llama-server and llama-cpp-python servers

READY_S = 60
CRASH_S = 30


def _crashes(supervisor: Supervisor) -> tuple[list, threading.Event]:
    crashes, seen = [], threading.Event()

    def record(event) -> None:
        if event.kind == "crash":
            crashes.append(event)
            seen.set()

    supervisor.subscribe(record)
    return crashes, seen


def _kill_and_diagnose(supervisor: Supervisor) -> tuple[object, list]:
    """SIGKILL the READY server from outside, as `kill -9` would; its crash diagnosis and its last readings."""
    crashes, seen = _crashes(supervisor)
    child = supervisor.child
    readings = [s for s in child.rss_samples if isinstance(s, MemorySample)]
    assert readings and readings[-1].available_bytes is not None, list(child.rss_samples)  # sampled while it ran
    os.kill(child.pid, signal.SIGKILL)
    assert seen.wait(CRASH_S), supervisor.tail(10)
    return crashes[0].payload.diagnosis, readings


@pytest.mark.parametrize("backend", ["llama-server", "embedded"])
def test_a_kill_with_memory_to_spare_is_a_stop_from_outside_and_changes_no_setting(backend, running_server):
    memory = psutil.virtual_memory()
    assert memory.available > 0.2 * memory.total, f"this test needs memory to spare: {memory}"
    supervisor = running_server(backend, supervisor_kwargs={"backoff_s": (0.2,)})
    ctx = supervisor.config.ctx
    for kill in (1, 2):
        diagnosis, readings = _kill_and_diagnose(supervisor)
        assert diagnosis.cause == "killed_from_outside", (kill, diagnosis.cause, diagnosis.evidence)
        english = diagnosis.message.render("en")
        assert english.startswith("The server was stopped from outside while memory was fine (it used ")
        assert english.endswith("were free): another program, a system tool or someone ended it."), english
        assert "服务器在内存充足时被外部结束" in diagnosis.message.render("zh")
        assert diagnosis.action is None and diagnosis.restartable
        assert diagnosis.next_step.render("en").startswith("Restart it with the same settings.")
        # the card's evidence: the readings (server RSS, memory used of the limit, available) and the kernel's word
        assert sum(" available" in line and " used of " in line for line in diagnosis.evidence) >= 1
        assert any(line.startswith("kernel out-of-memory kill") for line in diagnosis.evidence), diagnosis.evidence
        assert not any("srv " in line or "HTTP" in line or "INFO:" in line for line in diagnosis.evidence)
        print(f"{backend} kill {kill}: {english} | last reading {readings[-1]}")
        assert supervisor.wait_for({State.RESTARTING, State.FAILED}, CRASH_S) is State.RESTARTING
        assert supervisor.wait_for({State.READY, State.FAILED}, READY_S) is State.READY, supervisor.tail(15)
        assert supervisor.config.ctx == ctx  # no context cut, not after the second kill either
    assert supervisor.restart_count == 2


@pytest.fixture
def wide_model(tmp_path):
    """8 layers x 512 dims: a 262144-token f16 KV cache needs 4 GiB, far over the cgroup's 768 MiB."""
    from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama

    spec = TinyModelSpec(n_layers=8, n_embd=512, n_head=8, n_head_kv=8, n_ff=512, ctx_train=262144)
    return write_tiny_llama(tmp_path / "wide.gguf", spec)


def _server_in_cgroup(tmp_path, llama_server_bin: str, directory) -> str:
    """The real llama-server, exec'd from a two-line wrapper that first moves itself into the memory cgroup."""
    wrapper = tmp_path / "llama-server-in-cgroup"
    wrapper.write_text(f'#!/bin/sh\necho $$ > "{directory}/cgroup.procs"\nexec "{llama_server_bin}" "$@"\n',
                       encoding="utf-8")
    wrapper.chmod(0o755)
    return str(wrapper)


def test_a_real_out_of_memory_kill_with_the_watchdog_off_is_memory(llama_server_bin, wide_model, tmp_path):
    with memory_cgroup_for_test(768 * 1024**2) as cgroup:
        if cgroup is None:
            pytest.skip("this machine lets no test make a memory cgroup (needs root): no real OOM kill can be made")
        server_bin = _server_in_cgroup(tmp_path, llama_server_bin, cgroup[0])
        config = LaunchConfig(model=str(wide_model), backend="llama-server", ctx=262144, threads=1,
                              port=find_free_port(), server_bin=server_bin, extra_args=("--no-warmup",))
        supervisor = Supervisor(config)
        assert supervisor.watchdog is None  # nothing restarts it before the kernel acts
        crashes, seen = _crashes(supervisor)
        try:
            supervisor.start()
            assert seen.wait(READY_S), supervisor.tail(20)
            assert supervisor.wait_for({State.FAILED}, CRASH_S) is State.FAILED
        finally:
            supervisor.close()
    crash = crashes[0]
    diagnosis = crash.payload.diagnosis
    assert crash.payload.signal == "SIGKILL" and diagnosis.cause == "oom_killed", (diagnosis.cause, diagnosis.evidence)
    assert diagnosis.message.render("en").startswith("The server was stopped by the system because the computer ran "
                                                     "out of memory")
    assert diagnosis.action == change_settings({"ctx": 131072}) and not diagnosis.restartable
    # the card shows the kernel's word: its line naming this pid where its log is readable, else its counters
    named = f"Killed process {crash.payload.pid} " in diagnosis.evidence[0]
    counted = any(line.startswith("kernel out-of-memory kills while it ran: ") and " 0 in" not in line
                  for line in diagnosis.evidence)
    assert named or counted, diagnosis.evidence
    print(diagnosis.message.render("en"), diagnosis.next_step.render("en"), *diagnosis.evidence, sep="\n  ")
