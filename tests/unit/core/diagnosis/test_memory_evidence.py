"""A kill is called "out of memory" only with memory evidence: every branch of the rule in memory_evidence.py, and
the sentence, fix and evidence lines each branch gives (English and Chinese)."""

from __future__ import annotations

import pytest

from app.core.diagnosis import MemorySample, OomEvidence, diagnose
from app.core.diagnosis.memory_evidence import MemoryState, judge_kill
from app.core.diagnosis.rss_trend import rss_trend
from app.core.launch.config import LaunchConfig
from app.core.problem import change_settings

GIB = 1024**3
MIB = 1024**2
CONFIG = LaunchConfig(model="/models/llama.gguf", ctx=4096, gpu_layers=0)
KILL_LINE = ("[ 9000.000100] Out of memory: Killed process 4242 (llama-server) total-vm:8418000kB, "
             "anon-rss:8178892kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:15064kB oom_score_adj:0")
LOG = ["srv  log_server_r: request: POST /v1/chat/completions 127.0.0.1 200",
       "srv  update_slots: all slots are idle"]
# the kernel could be asked and had nothing: counters readable and unchanged, its log readable without our pid
KERNEL_QUIET = OomEvidence(vmstat_delta=0, cgroup_delta=0, kernel_log_readable=True)


def readings(*available_gib: float, rss: int = 297 * MIB, total: int = 23 * GIB, scope: str = "system") -> list:
    """Half-second readings of a server using ``rss`` while the system had ``available_gib`` available."""
    return [MemorySample(1000.0 + i / 2, rss, total - int(gib * GIB), total, scope)
            for i, gib in enumerate(available_gib)]


PLENTY = readings(21.0, 21.0, 21.0, 21.0)


def kill(samples=(), oom=None, **kwargs):
    return diagnose(137, LOG, CONFIG, oom_evidence=oom, rss_samples=samples, was_ready=True, **kwargs)


# --- the case: kill -9 with 21 GiB free ------------------------------------------------------------------

def test_a_kill_with_memory_to_spare_is_a_stop_from_outside_with_restart():
    diagnosis = kill(PLENTY, KERNEL_QUIET)
    assert diagnosis.cause == "killed_from_outside"
    assert diagnosis.message.render("en") == (
        "The server was stopped from outside while memory was fine (it used 297.0 MiB; 21.0 GiB were free): "
        "another program, a system tool or someone ended it.")
    assert diagnosis.message.render("zh") == (
        "服务器在内存充足时被外部结束（它占用 297.0 MiB，还有 21.0 GiB 可用）：是其他程序、系统工具或某人结束了它。")
    assert diagnosis.action is None and diagnosis.restartable  # Restart as it was: never a context cut
    assert diagnosis.next_step.render("en").startswith("Restart it with the same settings.")
    assert "memory" not in diagnosis.exit_meaning.render("en")  # the SIGKILL meaning no longer guesses either


def test_a_second_kill_still_changes_nothing():
    first = kill(PLENTY, KERNEL_QUIET)
    second = diagnose(-9, LOG, CONFIG, oom_evidence=KERNEL_QUIET, rss_samples=PLENTY, was_ready=True)
    assert first.cause == second.cause == "killed_from_outside"
    assert first.action is None and second.action is None


def test_the_evidence_is_the_memory_not_the_http_log():
    evidence = kill(PLENTY, KERNEL_QUIET).evidence
    assert not any("POST" in line or "slots" in line for line in evidence), evidence
    shown = [line for line in evidence if "available" in line and "server" in line]
    assert len(shown) == 3 and all("21.0 GiB available" in line and "23.0 GiB" in line for line in shown), evidence
    assert "kernel out-of-memory kills while it ran: 0 in its memory cgroup, 0 on the whole system" in evidence
    assert "kernel log: no out-of-memory kill of this server" in evidence
    assert any(line.startswith("server memory: peak 297.0 MiB") for line in evidence), evidence


# --- every branch of the rule --------------------------------------------------------------------------------------

def test_the_kernel_naming_the_pid_beats_readings_that_look_fine():
    """An allocation can exhaust memory between two half-second readings: the kernel's word wins."""
    oom = OomEvidence(vmstat_delta=1, kernel_lines=(KILL_LINE,), killed_rss_bytes=8178892 * 1024,
                      kernel_log_readable=True)
    diagnosis = kill(PLENTY, oom)
    assert diagnosis.cause == "oom_killed"
    assert diagnosis.message.render("en").startswith("The server was stopped by the system because the computer ran "
                                                     "out of memory")
    assert diagnosis.action == change_settings({"ctx": 2048})
    assert diagnosis.evidence[0] == KILL_LINE


def test_a_counted_kill_that_the_kernel_log_cannot_attribute_is_memory():
    diagnosis = kill(PLENTY, OomEvidence(cgroup_delta=1, vmstat_delta=1, kernel_log_readable=False))
    assert diagnosis.cause == "oom_killed" and diagnosis.action == change_settings({"ctx": 2048})
    assert "kernel out-of-memory kills while it ran: 1 in its memory cgroup, 1 on the whole system" in \
        diagnosis.evidence


def test_a_kill_of_another_process_meanwhile_is_not_ours():
    """vmstat counts every OOM kill on the machine; a readable kernel log that names someone else says whose."""
    oom = OomEvidence(vmstat_delta=1, cgroup_delta=0, kernel_log_readable=True)
    assert not oom.confirmed and oom.rules_out_kernel_kill
    assert kill(PLENTY, oom).cause == "killed_from_outside"


def test_rss_at_the_limit_is_memory_evidence():
    rising = [int(x * GIB) for x in (1.0, 2.0, 3.0, 3.7)]
    diagnosis = diagnose(-9, [], CONFIG, rss_samples=rising, memory_limit=4 * GIB, oom_evidence=KERNEL_QUIET)
    assert diagnosis.cause == "oom_killed"
    assert diagnosis.message.render("en") == ("The server was killed, most likely because the computer ran out of "
                                              "memory (it used 3.7 GiB of 4.0 GiB just before).")
    assert diagnosis.action == change_settings({"ctx": 2048})


def test_memory_nearly_gone_in_the_last_readings_is_evidence_even_with_quiet_counters():
    """User-space OOM killers (systemd-oomd, earlyoom) leave the kernel's counters alone."""
    diagnosis = kill(readings(6.0, 3.0, 1.0), KERNEL_QUIET)
    assert diagnosis.cause == "oom_killed"
    assert diagnosis.message.render("en") == ("The server was killed, most likely because memory ran out: only "
                                              "1.0 GiB of 23.0 GiB were available just before (it used 297.0 MiB).")
    assert "1.0 GiB" in diagnosis.message.render("zh") and diagnosis.action == change_settings({"ctx": 2048})


def test_a_tight_cgroup_is_read_as_the_limit():
    tight = readings(0.05, 0.04, rss=500 * MIB, total=GIB, scope="cgroup")
    diagnosis = kill(tight)
    assert diagnosis.cause == "oom_killed" and "of 1.0 GiB were available" in diagnosis.message.render("en")
    assert any("cgroup memory" in line for line in diagnosis.evidence), diagnosis.evidence


def test_only_the_last_readings_count():
    """Memory was short a minute ago, then freed: the kill came when it was fine."""
    recovered = readings(0.5, 0.5, 12.0, 12.0, 12.0)
    assert kill(recovered, KERNEL_QUIET).cause == "killed_from_outside"


def test_readings_alone_show_memory_was_fine_where_the_kernel_cannot_be_asked():
    """macOS and Windows: no counters, no kernel log; the readings still show the memory."""
    diagnosis = kill(PLENTY, None)
    assert diagnosis.cause == "killed_from_outside" and "21.0 GiB were free" in diagnosis.message.render("en")
    assert "kernel out-of-memory kill counters: not readable" in diagnosis.evidence
    assert "kernel log: not readable" in diagnosis.evidence


def test_the_kernel_alone_rules_its_oom_killer_out_without_readings():
    for oom in (OomEvidence(vmstat_delta=0, cgroup_delta=None), OomEvidence(kernel_log_readable=True)):
        diagnosis = kill((), oom)
        assert diagnosis.cause == "killed_from_outside", oom
        assert diagnosis.message.render("en") == (
            "The server was stopped from outside, not by the operating system's out-of-memory killer (it recorded no "
            "such kill): another program, a system tool or someone ended it.")
        assert "系统没有这样的记录" in diagnosis.message.render("zh")
        assert diagnosis.action is None and "available memory: not read while it ran" in diagnosis.evidence


@pytest.mark.parametrize("samples", [(), [(1.0, 300 * MIB), (1.5, 310 * MIB)]])
def test_nothing_readable_says_so_and_offers_no_memory_fix(samples):
    diagnosis = kill(samples, OomEvidence())  # counters and kernel log unreadable
    assert diagnosis.cause == "killed"
    english = diagnosis.message.render("en")
    assert "nothing here shows why" in english and "could not be read" in english
    assert "usual" not in english and "ran out of memory" not in english
    assert "原因无从得知" in diagnosis.message.render("zh")
    assert diagnosis.action is None and diagnosis.next_step.render("en").startswith("Restart it with the same")
    if samples:
        assert "(it used 310.0 MiB just before)" in english


def test_killed_while_loading_with_nothing_known_is_not_restarted_on_its_own():
    assert diagnose(-9, [], CONFIG, was_ready=False).restartable is False
    assert diagnose(-9, [], CONFIG, rss_samples=PLENTY, was_ready=False).restartable is True  # from outside


def test_judge_kill_states_directly():
    quiet_trend = rss_trend(PLENTY, 23 * GIB)
    assert judge_kill(KERNEL_QUIET, quiet_trend, PLENTY).state is MemoryState.FINE
    assert judge_kill(None, None, ()).state is MemoryState.UNKNOWN
    assert judge_kill(OomEvidence(kernel_lines=(KILL_LINE,)), None, ()).state is MemoryState.SHORT
    verdict = judge_kill(None, quiet_trend, PLENTY)
    assert verdict.recent == tuple(PLENTY[-3:]) and verdict.available_bytes == 21 * GIB


def test_a_reading_taken_while_the_killed_server_was_torn_down_does_not_count_as_its_use():
    """The last reading can catch the process freeing its memory: the most of the last readings is what it used."""
    samples = readings(21.0, 21.0, 21.0) + [MemorySample(1002.0, 4 * MIB, 2 * GIB, 23 * GIB)]
    assert "(it used 297.0 MiB; 21.0 GiB were free)" in kill(samples, KERNEL_QUIET).message.render("en")


def test_the_kernels_figure_of_the_killed_process_is_its_peak_when_higher():
    oom = OomEvidence(kernel_lines=(KILL_LINE,), killed_rss_bytes=8178892 * 1024, kernel_log_readable=True)
    assert "(it used 7.8 GiB just before)" in kill(PLENTY, oom).message.render("en")


def test_a_sample_without_the_system_side_has_no_available_memory():
    assert MemorySample(1.0, 100).available_bytes is None
    assert not MemorySample(1.0, 100).low
    assert kill([MemorySample(1.0, 300 * MIB)], OomEvidence()).cause == "killed"
