"""The instruction-set probe runs real machine code in child processes; a fault must only ever kill the child."""

from __future__ import annotations

import pytest

from app.core.engine import cpu_isa
from app.core.engine.cpu_isa import FEATURES, IsaReport, Verdict, advertised_flags, probe, run_in_child

pytestmark = pytest.mark.skipif(not cpu_isa.can_probe(), reason="the probe runs x86-64 code on Linux only")

ALL_FLAGS = sorted({flag for feature in FEATURES for flag in feature.cpuinfo_flags})


def real_flags() -> set[str]:
    with open("/proc/cpuinfo", encoding="utf-8") as handle:
        return advertised_flags(handle.read())


@pytest.fixture(scope="module")
def real_report() -> IsaReport:
    """One real probe of this machine (a child process per feature), read by the tests that only look at it."""
    return probe()


def test_an_instruction_no_cpu_has_is_reported_as_a_fault_not_a_crash():
    verdict, reason = run_in_child("hex:0f0b")  # ud2: always an invalid opcode
    assert verdict is Verdict.FAULTS
    assert "SIGILL" in reason


def test_the_x86_64_baseline_runs():
    assert run_in_child("hex:90") == (Verdict.RUNS, "")  # nop


def test_every_advertised_feature_is_tried_and_the_real_cpu_runs_it(real_report):
    report = real_report
    flags = real_flags()
    for feature in FEATURES:
        advertised = all(flag in flags for flag in feature.cpuinfo_flags)
        if not advertised:
            assert report.verdicts[feature.name] is Verdict.NOT_ADVERTISED
        elif report.verdicts[feature.name] is Verdict.FAULTS:
            # the case the probe exists for (AMX in some VMs): it must say why
            assert report.reasons[feature.name]


def test_a_cpu_that_advertises_what_it_cannot_run_gets_faults_for_exactly_those():
    """The VM case, made here: claim every extension; those this CPU lacks must fault, not kill the probe."""
    claimed = "flags\t: " + " ".join(ALL_FLAGS)
    report = probe(claimed)
    missing = [f for f in FEATURES if not all(flag in real_flags() for flag in f.cpuinfo_flags)]
    for feature in missing:
        verdict = report.verdicts[feature.name]
        if not all(report.runs(dep) for dep in feature.requires):
            assert verdict is Verdict.BLOCKED, feature.name
        else:
            assert verdict is Verdict.FAULTS, f"{feature.name} ran although the CPU does not advertise it"
    assert all(f not in report.usable() for f in missing)


def test_features_whose_prerequisite_faults_are_not_tried():
    calls = []

    def runner(name):
        calls.append(name)
        return (Verdict.FAULTS, "killed by SIGILL") if name == "avx" else (Verdict.RUNS, "")

    report = probe("flags : sse4_2 avx avx2 fma f16c bmi2", runner=runner)
    assert report.verdicts["avx"] is Verdict.FAULTS
    assert report.verdicts["avx2"] is Verdict.BLOCKED and "avx2" not in calls
    assert report.runs("sse42") and report.runs("bmi2")


def test_report_round_trips_through_json(real_report):
    report = real_report
    assert IsaReport.from_dict(report.to_dict()) == report
