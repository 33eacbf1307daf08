"""The child process itself: own process group, parent-death signal, rlimits, whole-group stop, binary facts cache."""

from __future__ import annotations

import os
import resource
import sys
import threading
import time

import psutil

from app.core.launch import discovery as backend_discovery
from app.core.process.child import ChildProcess

PROBE = r"""
import ctypes, os, resource, subprocess, sys, time
libc = ctypes.CDLL(None)
sig = ctypes.c_int(0)
libc.prctl(2, ctypes.byref(sig), 0, 0, 0)  # PR_GET_PDEATHSIG
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
print(sig.value, os.getpgid(0), resource.getrlimit(resource.RLIMIT_AS)[0], grandchild.pid, flush=True)
time.sleep(60)
"""


def test_child_has_own_group_death_signal_limits_and_stops_with_its_children(app_home):
    lines: list[str] = []
    got_line = threading.Event()

    def on_line(stream: str, text: str) -> None:
        lines.append(text)
        got_line.set()

    limit = 8 * 2**30
    child = ChildProcess([sys.executable, "-c", PROBE], on_line=on_line, on_exit=lambda c, rc: None,
                         rlimits={resource.RLIMIT_AS: limit})
    assert got_line.wait(20), lines
    death_signal, group, as_limit, grandchild = (int(v) for v in lines[0].split())
    assert death_signal == 9 and group == child.pid and as_limit == limit
    started = time.monotonic()
    child.stop(grace_s=2.0)
    assert time.monotonic() - started < 2.0  # SIGTERM was enough; no need to wait out the grace period
    deadline = time.monotonic() + 5
    while psutil.pid_exists(grandchild) and psutil.Process(grandchild).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, "the grandchild survived the group stop"
        time.sleep(0.05)


def test_binary_facts_are_cached_per_file_version(tmp_path, app_home):
    counter = tmp_path / "runs"
    binary = tmp_path / "llama-server"
    binary.write_text(f'#!/bin/sh\necho run >> "{counter}"\n'
                      'case "$1" in --version) echo "version: 4242 (feedbee)";; '
                      '--help) echo "-m,    --model FNAME                    model path";; esac\n')
    binary.chmod(0o755)
    backend_discovery.clear_cache()
    first = backend_discovery.inspect_llama_server(binary)
    assert first.build_number == 4242 and set(first.flag_help) == {"-m", "--model"}
    backend_discovery.clear_cache()  # memory cache gone: the disk cache must answer
    assert backend_discovery.inspect_llama_server(binary) == first
    assert len(counter.read_text().splitlines()) == 2  # --version and --help ran once each
    os.utime(binary, ns=(time.time_ns(), time.time_ns() + 10**9))  # a new build in place -> asked again
    backend_discovery.inspect_llama_server(binary)
    assert len(counter.read_text().splitlines()) == 4


def test_llama_server_is_found_by_env_and_path(tmp_path, monkeypatch):
    binary = tmp_path / "bin" / backend_discovery.EXE_NAME
    binary.parent.mkdir()
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    monkeypatch.setenv("PATH", str(binary.parent) + os.pathsep + os.environ.get("PATH", ""))
    assert backend_discovery.find_llama_server() == backend_discovery.shipped_llama_server()  # the app's own first
    monkeypatch.setattr(backend_discovery, "shipped_llama_server", lambda: None)  # as if the set-up had none
    assert backend_discovery.find_llama_server() == binary
    monkeypatch.setenv("GGUF_LAUNCHER_LLAMA_SERVER", str(binary.parent))
    assert backend_discovery.candidate_paths()[0] == binary


def test_windows_job_limit_struct_has_the_documented_64_bit_layout():
    import ctypes

    from app.core.process import windows as child_windows

    if ctypes.sizeof(ctypes.c_void_p) == 8:
        assert ctypes.sizeof(child_windows._BasicLimits) == 64
        assert ctypes.sizeof(child_windows._ExtendedLimits) == 144  # JOBOBJECT_EXTENDED_LIMIT_INFORMATION on x64
        assert child_windows._ExtendedLimits.ProcessMemoryLimit.offset == 112
