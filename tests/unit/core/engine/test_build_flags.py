"""Build flags follow what the probe proved: on for what runs, off for what faults, never native on x86 Linux."""

from __future__ import annotations

from app.core.engine.build_flags import SERVER_EXTRA_ARGS, choose, portable, summary_line
from app.core.engine.cpu_isa import FEATURES, IsaReport, Verdict


def report_with(runs: set[str], faults: set[str] = frozenset()) -> IsaReport:
    verdicts = {}
    for feature in FEATURES:
        verdicts[feature.name] = (Verdict.RUNS if feature.name in runs else
                                  Verdict.FAULTS if feature.name in faults else Verdict.NOT_ADVERTISED)
    return IsaReport(probed=True, verdicts=verdicts)


def test_amx_that_faults_is_switched_off_and_the_rest_of_avx512_kept():
    avx512 = {"sse42", "avx", "f16c", "fma", "avx2", "bmi2", "avx512", "avx512_vnni", "avx512_bf16", "avx512_vbmi"}
    choice = choose(report_with(avx512, faults={"amx_tile"}))
    args = choice.cmake_args()
    assert "-DGGML_NATIVE=OFF" in args
    assert "-DGGML_AMX_TILE=OFF" in args and "-DGGML_AMX_INT8=OFF" in args
    assert "-DGGML_AVX512=ON" in args and "-DGGML_AVX512_VNNI=ON" in args and "-DGGML_AVX2=ON" in args
    assert "-DLLAMA_BUILD_TESTS=OFF" in args and "-DLLAMA_BUILD_EXAMPLES=OFF" in args
    line = summary_line(choice)
    assert "AMX" in line and "without it" in line and "AVX-512 VNNI" in line


def test_every_cpu_option_is_set_explicitly():
    args = choose(report_with({"sse42", "avx", "avx2"})).cmake_args()
    for feature in FEATURES:
        assert sum(arg.startswith(f"-D{feature.ggml_option}=") for arg in args) == 1


def test_unprobed_platform_keeps_the_native_build():
    choice = choose(IsaReport(probed=False))
    assert choice.native and "-DGGML_NATIVE=ON" in choice.cmake_args()
    assert "could not be tested" in summary_line(choice)


def test_server_build_adds_rpc_and_portable_is_plain_native_off():
    assert set(SERVER_EXTRA_ARGS) <= set(choose(report_with({"avx"})).cmake_args(server=True))
    assert portable().cmake_args()[0] == "-DGGML_NATIVE=OFF"
