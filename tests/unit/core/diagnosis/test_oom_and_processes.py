"""Crash decoder against real child processes (memory limits, signals, kills, failed starts) and OOM-killer evidence."""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from app.core.diagnosis import (
    OomEvidence,
    diagnose,
    diagnose_start_failure,
    diagnose_timeout,
    oom_evidence_since,
    snapshot_oom_counters,
)
from app.core.diagnosis.oom_evidence import OomCounters, kill_lines_for, read_counter, read_kmsg
from app.core.hardware.cgroup import memory_limit_bytes, own_cgroup_events_path
from app.core.launch.config import LaunchConfig
from app.core.problem import UserError, change_settings
from app.core.text import T, human_bytes

GIB = 1024**3
MIB = 1024**2
CONFIG = LaunchConfig(model="/models/llama.gguf", ctx=4096, gpu_layers=0)
KILL_LINE = ("[ 9000.000100] Out of memory: Killed process {pid} (llama-server) total-vm:8418000kB, "
             "anon-rss:8178892kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:15064kB oom_score_adj:0")


def run_child(code: str, **popen) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, **popen)


# --- counters, cgroups and kernel lines from files ------------------------------------------------------------

def test_counters_and_deltas_from_files(tmp_path):
    vmstat, events = tmp_path / "vmstat", tmp_path / "memory.events"
    vmstat.write_text("nr_free_pages 1000\noom_kill 3\npgfault 9\n")
    events.write_text("low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 0\n")
    before = snapshot_oom_counters(vmstat_path=str(vmstat), cgroup_events_path=str(events))
    assert (before.vmstat_oom_kill, before.cgroup_oom_kill) == (3, 1)
    vmstat.write_text("nr_free_pages 1000\noom_kill 4\n")
    events.write_text("oom 3\noom_kill 2\n")
    # stamped just after the snapshot, as the kernel would stamp it (a fixed stamp goes stale once uptime passes it)
    line = KILL_LINE.format(pid=4242).replace("[ 9000.000100]", f"[{before.monotonic_at + 1:12.6f}]")
    evidence = oom_evidence_since(before, 4242, vmstat_path=str(vmstat), cgroup_events_path=str(events),
                                  kernel_lines=[line])
    assert (evidence.vmstat_delta, evidence.cgroup_delta) == (1, 1)
    assert evidence.confirmed and evidence.pid_named
    assert evidence.killed_rss_bytes == 8178892 * 1024


def test_unreadable_sources_give_no_evidence_and_no_error(tmp_path):
    before = snapshot_oom_counters(vmstat_path=str(tmp_path / "missing"), cgroup_events_path=str(tmp_path / "nope"))
    assert before.vmstat_oom_kill is None and before.cgroup_oom_kill is None
    evidence = oom_evidence_since(before, 1, vmstat_path=str(tmp_path / "missing"),
                                  cgroup_events_path=str(tmp_path / "nope"), kmsg_path=str(tmp_path / "kmsg"),
                                  use_dmesg=False)
    assert evidence == OomEvidence(kernel_log_readable=False)
    assert not evidence.confirmed
    assert read_kmsg(str(tmp_path / "kmsg")) is None
    assert read_counter(tmp_path / "missing", "oom_kill") is None


def test_kmsg_records_are_read_without_blocking_and_matched_by_pid(tmp_path):
    kmsg = tmp_path / "kmsg"
    kmsg.write_text(
        "6,100,5000000,-;llama-server invoked oom-killer: gfp_mask=0x140dca, order=0, oom_score_adj=0\n"
        "3,101,5000100,-;Out of memory: Killed process 77 (llama-server) total-vm:100kB, anon-rss:2048kB, "
        "file-rss:0kB\n"
        "3,102,5000200,-;Out of memory: Killed process 78 (python) total-vm:100kB, anon-rss:4096kB, file-rss:0kB\n"
    )
    lines = read_kmsg(str(kmsg))
    assert lines[1].startswith("[    5.000100] Out of memory: Killed process 77")
    evidence = oom_evidence_since(OomCounters(None, None, 0.0, 1.0), 77, kmsg_path=str(kmsg), use_dmesg=False,
                                  vmstat_path=str(tmp_path / "x"), cgroup_events_path=str(tmp_path / "y"))
    assert evidence.kernel_log_readable
    assert len(evidence.kernel_lines) == 1 and "Killed process 77 " in evidence.kernel_lines[0]
    assert evidence.killed_rss_bytes == 2 * MIB
    # the same pid killed long before this server started (pid reuse) is not evidence
    late = OomCounters(None, None, 0.0, 500.0)
    assert not oom_evidence_since(late, 77, kmsg_path=str(kmsg), use_dmesg=False, vmstat_path="/x",
                                  cgroup_events_path="/y").pid_named


def test_cgroup_v2_task_line_also_names_the_pid():
    lines = ["oom-kill:constraint=CONSTRAINT_MEMCG,oom_memcg=/user.slice,task=llama-server,pid=31337,uid=1000"]
    found, _ = kill_lines_for(31337, lines)
    assert found == lines
    assert kill_lines_for(31338, lines)[0] == []


@pytest.mark.parametrize("layout", ["v1", "v2", "v2-unified", "container"])
def test_own_cgroup_is_found_in_every_layout(tmp_path, layout):
    root, self_cgroup = tmp_path / "cg", tmp_path / "self_cgroup"
    if layout == "v1":
        self_cgroup.write_text("9:name=systemd:/\n4:memory:/process_api/abc\n0::/\n")
        target = root / "memory" / "process_api" / "abc"
        name, limit_name, limit = "memory.oom_control", "memory.limit_in_bytes", str(2 * GIB)
    else:
        self_cgroup.write_text("0::/user.slice/app.scope\n")
        base = {"v2": root, "v2-unified": root / "unified", "container": root}[layout]
        target = base if layout == "container" else base / "user.slice" / "app.scope"
        name, limit_name, limit = "memory.events", "memory.max", str(GIB)
    target.mkdir(parents=True)
    (target / name).write_text("oom_kill 5\n")
    (target / limit_name).write_text(limit + "\n")
    assert own_cgroup_events_path(str(self_cgroup), str(root)) == str(target / name)
    assert memory_limit_bytes(str(self_cgroup), str(root)) == min(int(limit), psutil.virtual_memory().total)


# --- evidence and RSS in the sentence ------------------------------------------------------------------------

def test_confirmed_oom_kill_says_so_with_the_peak():
    samples = [(t, int(b * GIB)) for t, b in enumerate((2.0, 4.5, 6.9, 7.8))]
    evidence = OomEvidence(vmstat_delta=1, kernel_lines=(KILL_LINE.format(pid=9),), kernel_log_readable=True)
    diagnosis = diagnose(137, ["srv  update_slots: all slots are idle"], CONFIG.with_changes(ctx=4096),
                         oom_evidence=evidence, rss_samples=samples)
    assert diagnosis.cause == "oom_killed"
    assert diagnosis.message.render("en") == ("The server was stopped by the system because the computer ran out of "
                                              "memory (it used 7.8 GiB just before).")
    assert diagnosis.message.render("zh") == ("模型所需内存超过了可用内存，"
                                              "系统强制结束了服务器进程（结束前占用 7.8 GiB）。")
    assert diagnosis.next_step.render("en") == "Lower the context to 2048 tokens and restart."
    assert diagnosis.action == change_settings({"ctx": 2048})
    assert diagnosis.evidence[0] == KILL_LINE.format(pid=9)


def test_kernel_rss_is_the_peak_when_nothing_was_sampled():
    evidence = OomEvidence(kernel_lines=(KILL_LINE.format(pid=9),), killed_rss_bytes=8178892 * 1024)
    assert "7.8 GiB" in diagnose(-9, [], CONFIG, oom_evidence=evidence).message.render("en")


def test_rss_climbing_to_the_limit_makes_a_kill_a_likely_oom():
    rising = [int(x * GIB) for x in (1.0, 2.0, 3.0, 3.7)]
    diagnosis = diagnose(-9, [], CONFIG, rss_samples=rising, memory_limit=4 * GIB)
    assert diagnosis.cause == "oom_killed"
    assert "most likely" in diagnosis.message.render("en") and "3.7 GiB" in diagnosis.message.render("en")
    flat = [int(0.5 * GIB)] * 4
    assert diagnose(-9, [], CONFIG, rss_samples=flat, memory_limit=4 * GIB).cause == "killed"
    # still climbing fast at 75 % when the last sample was taken (samples are taken every half second or so)
    climbing = [int(x * GIB) for x in (1.0, 1.8, 2.4, 3.0)]
    assert diagnose(-9, [], CONFIG, rss_samples=climbing, memory_limit=4 * GIB).cause == "oom_killed"
    steady_high = [int(3.0 * GIB)] * 4
    assert diagnose(-9, [], CONFIG, rss_samples=steady_high, memory_limit=4 * GIB).cause == "killed"


def test_rss_does_not_turn_a_logged_crash_into_oom():
    rising = [int(x * GIB) for x in (1.0, 2.0, 3.9)]
    diagnosis = diagnose(1, ["error: invalid argument: --bogus"], CONFIG, rss_samples=rising, memory_limit=4 * GIB)
    assert diagnosis.cause == "bad_argument"


# --- real children -----------------------------------------------------------------------------------------

def test_real_child_hitting_an_address_space_limit():
    import resource

    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (512 * MIB, 512 * MIB))

    child = run_child("blocks = [bytearray(64 * 1024 * 1024) for _ in range(32)]", preexec_fn=limit_memory)
    assert child.returncode == 1
    diagnosis = diagnose(child.returncode, child.stderr.splitlines(), CONFIG)
    assert diagnosis.cause == "ram_out_of_memory"
    assert diagnosis.action == change_settings({"ctx": 2048})
    assert any("MemoryError" in line for line in diagnosis.evidence)


def _sample_rss_until(proc: subprocess.Popen, predicate, timeout_s: float = 20.0) -> list[tuple[float, int]]:
    samples: list[tuple[float, int]] = []
    process = psutil.Process(proc.pid)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        rss = process.memory_info().rss
        samples.append((time.monotonic(), rss))
        if predicate(rss):
            return samples
        time.sleep(0.02)
    raise AssertionError(f"child never reached the RSS target; last samples {samples[-3:]}")


def test_real_child_killed_with_sigkill_while_growing():
    grow = "import time\nb = []\nwhile True:\n    b.append(bytearray(8 * 1024 * 1024)); time.sleep(0.01)\n"
    with subprocess.Popen([sys.executable, "-c", grow], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as proc:
        try:
            samples = _sample_rss_until(proc, lambda rss: rss > 160 * MIB)
        finally:
            proc.kill()
        proc.wait(timeout=10)
    peak = max(rss for _, rss in samples)
    assert proc.returncode == -signal.SIGKILL
    # The supervisor passes the limit it lives under; here a limit the child nearly reached.
    likely = diagnose(proc.returncode, [], CONFIG, rss_samples=samples, memory_limit=int(peak * 1.1))
    assert likely.cause == "oom_killed" and likely.signal == "SIGKILL"
    assert human_bytes(peak) in likely.message.render("zh")
    plain = diagnose(proc.returncode, [], CONFIG, rss_samples=samples, memory_limit=64 * GIB)
    assert plain.cause == "killed" and human_bytes(peak) in plain.message.render("en")


@contextlib.contextmanager
def memory_cgroup_for_test(limit_bytes: int):
    """A child memory cgroup under ours (v1 or v2) with a hard limit, or None where this process may not create one
    (only root in a VM or CI runner may). Yields (directory, name of its oom_kill counter file)."""
    events = own_cgroup_events_path()
    target = Path(events).parent / f"gguf-launcher-test-{os.getpid()}" if events else None
    try:
        target.mkdir()
        limit_file = "memory.limit_in_bytes" if (target.parent / "memory.limit_in_bytes").exists() else "memory.max"
        (target / limit_file).write_text(str(limit_bytes))
    except (OSError, AttributeError):
        if target is not None and target.exists():
            target.rmdir()
        yield None
        return
    try:
        yield target, Path(events).name
    finally:
        for _ in range(50):  # the killed child leaves the cgroup a moment after it is reaped
            try:
                target.rmdir()
                break
            except OSError:
                time.sleep(0.1)


def join_cgroup(directory: Path):
    def apply():
        (directory / "cgroup.procs").write_text(str(os.getpid()))

    return apply


def test_real_out_of_memory_kill_is_recognised():
    """Where a memory cgroup can be created, the kernel's OOM killer really kills the child and the evidence names
    it; elsewhere the same path must degrade without errors to a kill the kernel's evidence rules out (its counters
    or log readable) or to one nobody can explain."""
    grow = "b = []\nwhile True:\n    b.append(bytearray(8 * 1024 * 1024))\n"
    with memory_cgroup_for_test(64 * MIB) as cgroup:
        if cgroup is None:
            before = snapshot_oom_counters()
            proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
            proc.kill()
            proc.wait(timeout=10)
            evidence = oom_evidence_since(before, proc.pid, use_dmesg=False)
            assert not evidence.pid_named
            expected = "killed_from_outside" if evidence.rules_out_kernel_kill else "killed"
            assert diagnose(proc.returncode, [], CONFIG, oom_evidence=evidence).cause == expected, evidence
            return
        directory, counter = cgroup
        before = snapshot_oom_counters(cgroup_events_path=str(directory / counter))
        with subprocess.Popen([sys.executable, "-c", grow], preexec_fn=join_cgroup(directory),
                              stderr=subprocess.DEVNULL) as proc:
            proc.wait(timeout=60)
        evidence = oom_evidence_since(before, proc.pid, cgroup_events_path=str(directory / counter))
    assert proc.returncode == -signal.SIGKILL
    assert evidence.cgroup_delta == 1 and evidence.confirmed
    diagnosis = diagnose(proc.returncode, [], CONFIG, oom_evidence=evidence)
    assert diagnosis.cause == "oom_killed"
    assert "ran out of memory" in diagnosis.message.render("en")
    if evidence.kernel_log_readable:
        assert evidence.pid_named and f"Killed process {proc.pid} " in diagnosis.evidence[0]
        assert "结束前占用" in diagnosis.message.render("zh")


@pytest.mark.parametrize(("code", "cause", "signal_name"), [
    ("import os; os.abort()", "crashed", "SIGABRT"),
    ("import ctypes; ctypes.string_at(0)", "crashed", "SIGSEGV"),
    ("import os, signal; os.kill(os.getpid(), signal.SIGILL)", "illegal_instruction", "SIGILL"),
])
def test_real_signal_deaths(code, cause, signal_name):
    child = run_child(code)
    diagnosis = diagnose(child.returncode, child.stderr.splitlines(), CONFIG)
    assert diagnosis.signal == signal_name
    assert diagnosis.cause == cause
    assert diagnosis.message.render("en") and diagnosis.exit_meaning.render("zh")


def test_real_python_traceback_is_quoted():
    child = run_child("raise RuntimeError('llama_decode returned -3')")
    diagnosis = diagnose(child.returncode, child.stderr.splitlines(), CONFIG, was_ready=True)
    assert diagnosis.cause == "python_error"
    assert "llama_decode returned -3" in diagnosis.message.render("en")
    assert "RuntimeError" not in diagnosis.message.render("en")  # its words in the sentence, its class in the evidence
    assert "RuntimeError: llama_decode returned -3" in diagnosis.evidence[0]
    assert diagnosis.restartable


# --- never ready, never started --------------------------------------------------------------------------------

def test_timeout_with_no_output_at_all():
    diagnosis = diagnose_timeout(90, [], CONFIG)
    assert diagnosis.cause == "ready_timeout"
    assert "printed nothing" in diagnosis.message.render("en") and "90" in diagnosis.message.render("zh")
    assert diagnosis.exit_code is None and "90" in diagnosis.exit_meaning.render("en")


def test_timeout_while_still_loading():
    lines = ["llama_model_loader: loaded meta data with 29 key-value pairs",
             "load_tensors: loading model tensors, this can take a while... (mmap = true)"]
    diagnosis = diagnose_timeout(120.4, lines, CONFIG)
    assert "still loading" in diagnosis.message.render("en")
    assert "120" in diagnosis.message.render("en")
    assert diagnosis.evidence[-1] == lines[-1]


def test_timeout_uses_what_the_readiness_poll_saw():
    diagnosis = diagnose_timeout(45, [], CONFIG, seen="HTTP 503 Loading model")
    assert "still loading" in diagnosis.message.render("en") and diagnosis.restartable
    assert diagnosis.evidence[-1] == "readiness check: HTTP 503 Loading model"
    silent = diagnose_timeout(45, [], CONFIG, seen="no HTTP answer")
    assert "printed nothing" in silent.message.render("en") and not silent.restartable
    many = diagnose_timeout(45, [f"line {n}" for n in range(100)], CONFIG, seen="no HTTP answer")
    assert len(many.evidence) == 20 and many.evidence[-1] == "readiness check: no HTTP answer"


def test_timeout_after_ready_words_and_with_other_output():
    ready = diagnose_timeout(30, ["INFO:     Uvicorn running on http://127.0.0.1:8000 (Press CTRL+C to quit)"], CONFIG)
    assert "did not answer" in ready.message.render("en")
    other = diagnose_timeout(30, ["something odd"], CONFIG)
    assert "something odd" in other.message.render("en")


def test_start_failure_missing_program(tmp_path):
    argv = [str(tmp_path / "llama-server"), "-m", "x.gguf"]
    with pytest.raises(OSError) as caught:
        subprocess.Popen(argv)
    diagnosis = diagnose_start_failure(caught.value, argv, CONFIG.with_changes(backend="llama-server"))
    assert diagnosis.cause == "missing_binary"
    assert "llama-server" in diagnosis.message.render("en")
    assert diagnosis.action == change_settings({"backend": "embedded"}) and diagnosis.restartable is False


def test_start_failure_not_executable_and_wrong_format(tmp_path):
    program = tmp_path / "llama-server"
    program.write_bytes(b"\x00\x01not a program")
    with pytest.raises(OSError) as caught:
        subprocess.Popen([str(program)])
    # without any execute bit even root gets EACCES
    assert diagnose_start_failure(caught.value, [str(program)], CONFIG).cause == "permission_denied"
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(OSError) as caught:
        subprocess.Popen([str(program)])
    assert diagnose_start_failure(caught.value, [str(program)], CONFIG).cause == "not_executable"
    with pytest.raises(OSError) as caught:
        subprocess.Popen([str(tmp_path)])
    cause = diagnose_start_failure(caught.value, [str(tmp_path)], CONFIG).cause
    assert cause in ("not_executable", "permission_denied")


def test_start_failure_from_a_user_error_keeps_its_words():
    error = UserError(T("No llama-server was found.", "没有找到 llama-server。"),
                      T("Install llama.cpp.", "安装 llama.cpp。"))
    diagnosis = diagnose_start_failure(error, ["llama-server"], CONFIG)
    assert diagnosis.cause == "start_failed"
    assert diagnosis.message.render("zh") == "没有找到 llama-server。"
    assert diagnosis.next_step.render("en") == "Install llama.cpp."


def test_busy_port_names_the_program_holding_it():
    holder = subprocess.Popen(
        [sys.executable, "-c", "import socket, sys, time\ns = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
                               "print(s.getsockname()[1], flush=True); time.sleep(30)"],
        stdout=subprocess.PIPE, text=True)
    try:
        port = int(holder.stdout.readline())
        line = f"0.00.002.716 E srv         start: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: {port}"
        diagnosis = diagnose(1, [line], CONFIG.with_changes(port=port))
        assert diagnosis.cause == "port_in_use" and diagnosis.action == change_settings({"port": 0})
        assert f"process {holder.pid}" in diagnosis.message.render("en")
        assert f"进程 {holder.pid}" in diagnosis.message.render("zh")
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
