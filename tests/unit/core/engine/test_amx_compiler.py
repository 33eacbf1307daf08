"""AMX is built only when this computer's compiler builds llama.cpp's tile set-up correctly (app/core/engine/
amx_compiler.py): GCC 12 drops the tile configuration's stores, and every quantized model then dies with SIGILL."""

from __future__ import annotations

import re
import subprocess

import pytest

from app.core.engine import cpu_isa
from app.core.engine.amx_compiler import build_compiler, miscompiles_amx, with_compiler_verdict
from app.core.engine.build_flags import choose, summary_line
from app.core.engine.cpu_isa import FEATURES, IsaReport, Verdict

AVX512_AND_AMX = {"sse42", "avx", "f16c", "fma", "avx2", "bmi2", "avx512", "avx512_vnni", "avx512_bf16", "amx_tile",
                  "amx_int8", "amx_bf16"}


def report_with(runs: set[str]) -> IsaReport:
    return IsaReport(probed=True, verdicts={f.name: Verdict.RUNS if f.name in runs else Verdict.NOT_ADVERTISED
                                            for f in FEATURES})


def test_a_compiler_that_breaks_amx_turns_amx_off_and_keeps_avx512():
    report, reason = with_compiler_verdict(report_with(AVX512_AND_AMX), check=lambda: "GCC 12 builds it wrongly")
    assert reason == "GCC 12 builds it wrongly"
    assert {n for n in ("amx_tile", "amx_int8", "amx_bf16") if report.runs(n)} == set()
    assert report.reasons["amx_int8"] == reason
    args = choose(report).cmake_args()
    assert "-DGGML_AMX_INT8=OFF" in args and "-DGGML_AMX_TILE=OFF" in args and "-DGGML_AVX512_VNNI=ON" in args
    line = summary_line(choose(report), reason)
    assert line.endswith("AMX is left out because GCC 12 builds it wrongly.") and "cannot run it here" not in line


def test_a_good_compiler_or_no_amx_changes_nothing_and_no_amx_costs_no_compile():
    report = report_with(AVX512_AND_AMX)
    assert with_compiler_verdict(report, check=lambda: None) == (report, None)
    calls = []
    no_amx = report_with({"sse42", "avx", "avx2"})
    assert with_compiler_verdict(no_amx, check=lambda: calls.append(1)) == (no_amx, None) and calls == []


def test_a_compiler_that_cannot_compile_amx_code_says_so(tmp_path):
    broken = tmp_path / "cc-broken"
    broken.write_text("#!/bin/sh\n[ \"$1\" = --version ] && echo 'toy-cc 1.0' && exit 0\nexit 1\n")
    broken.chmod(0o755)
    assert miscompiles_amx(str(broken)) == "toy-cc 1.0 cannot compile AMX code"


@pytest.mark.slow  # the real processor probe and the real compiler build and run test programs (about 2 s)
def test_the_real_compiler_here_gets_the_verdict_the_processor_and_its_version_call_for():
    compiler = build_compiler()
    assert compiler is not None  # the set-up needs one to build the engines at all
    isa = cpu_isa.probe()
    if not isa.runs("amx_tile"):  # no AMX here: the check is never needed, and the build has no AMX anyway
        assert with_compiler_verdict(isa, check=lambda: "unused") == (isa, None)
        return
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True, check=False).stdout
    major = subprocess.run([compiler, "-dumpversion"], capture_output=True, text=True, check=False).stdout
    gcc_12 = "clang" not in version.lower() and re.match(r"12\b", major.strip()) is not None
    reason = miscompiles_amx(compiler)
    if gcc_12:  # the compiler that drops ggml's tile configuration
        assert reason is not None and "SIGILL" in reason, reason
    else:
        assert reason is None, reason
