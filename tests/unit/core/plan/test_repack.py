"""Which weights llama.cpp's CPU backend copies, per instruction set the engine was built for, and the RAM that costs.

Every case names its build explicitly, so the answers do not depend on the processor running the tests."""

from __future__ import annotations

from types import SimpleNamespace

from app.core.engine import build_flags
from app.core.engine.cpu_isa import FEATURES, IsaReport, Verdict
from app.core.gguf.model_info import TensorInfo
from app.core.plan.cpu_kernels import CpuKernels, from_cmake_args, from_flags
from app.core.plan.layers import assign_layers
from app.core.plan.repack import (
    F16,
    IQ4_NL,
    MXFP4,
    Q2_K,
    Q4_0,
    Q4_1,
    Q4_K,
    Q8_0,
    copy_of,
    repack_extra_bytes,
    repack_types,
)

F32, Q6_K = 0, 14
AVX2_ONLY = CpuKernels(avx2=True)
AVX512 = CpuKernels(avx2=True, avx512=True)
AMX = CpuKernels(avx2=True, avx512=True, amx=True)
NO_AVX2 = CpuKernels()
ARM = CpuKernels(arm_dotprod=True)


def _tensor(name: str, shape: tuple[int, ...], type_id: int, size: int = 1000) -> TensorInfo:
    return TensorInfo(name, shape, type_id, 0, size)


def _info(*tensors: TensorInfo, n_layer: int = 2):
    return SimpleNamespace(tensors=list(tensors), block_count=n_layer)


def _report(runs: set[str]) -> IsaReport:
    return IsaReport(True, {f.name: Verdict.RUNS if f.name in runs else Verdict.NOT_ADVERTISED for f in FEATURES})


def test_the_types_each_build_repacks():
    assert repack_types(AVX2_ONLY) == {Q4_0, Q4_K, IQ4_NL, MXFP4}
    assert repack_types(AVX512) == {Q4_0, Q4_K, IQ4_NL, MXFP4, Q2_K}  # the Q2_K layout needs AVX-512
    assert {Q4_0, Q8_0, Q6_K} <= repack_types(ARM)
    assert repack_types(NO_AVX2) == frozenset()  # no AVX2: no layouts, nothing repacked
    assert repack_types(CpuKernels(avx2=True, repack=False)) == frozenset()  # GGML_CPU_REPACK=OFF


def test_the_build_not_the_processor_decides():
    """The set-up's own records: an AVX-512 processor whose AMX is left out, and llama.cpp's portable build."""
    avx512_no_amx = build_flags.choose(_report({"sse42", "avx", "f16c", "fma", "avx2", "bmi2", "avx512",
                                                "avx512_vnni", "avx512_bf16", "avx512_vbmi"}))
    kernels = from_cmake_args(avx512_no_amx.cmake_args(server=True))
    assert (kernels.avx2, kernels.avx512, kernels.amx, kernels.source) == (True, True, False, "build")
    amx = from_cmake_args(build_flags.choose(_report({f.name for f in FEATURES})).cmake_args())
    assert amx.amx and amx.avx512
    portable = from_cmake_args(build_flags.portable().cmake_args())  # GGML_NATIVE=OFF: AVX2 on by default
    assert (portable.avx2, portable.avx512, portable.amx) == (True, False, False)
    assert from_cmake_args(("-DGGML_NATIVE=ON",)) is None  # native: follows the processor
    assert from_flags(["avx2", "avx512f", "avx512_vnni", "amx_int8"]) == AMX
    assert from_flags(["avx2", "amx_int8"]).amx is False  # ggml's AMX code also needs AVX512-VNNI


def test_q2_k_is_copied_on_an_avx512_build_only():
    ffn = _tensor("blk.0.ffn_up.weight", (576, 1536), Q2_K)
    assert copy_of(ffn, AVX2_ONLY) is None
    assert copy_of(ffn, AVX512).buffer == "CPU_REPACK"


def test_amx_takes_its_types_first_and_converts_them():
    q8 = _tensor("blk.0.attn_q.weight", (576, 576), Q8_0, 576 * 18 * 34)
    copy = copy_of(q8, AMX)
    assert copy.buffer == "AMX" and copy.n_bytes == 576 * 18 * (34 + 4)  # +4 bytes of compensation per block
    assert copy_of(q8, AVX512) is None  # no x86 repack layout for Q8_0
    q4_1 = _tensor("blk.0.attn_q.weight", (576, 576), Q4_1, 576 * 18 * 20)
    assert copy_of(q4_1, AMX).n_bytes == 576 * 18 * 20 and copy_of(q4_1, AVX512) is None
    q4_k = _tensor("blk.0.ffn_up.weight", (1536, 4096), Q4_K, 4096 * 6 * 144)
    assert copy_of(q4_k, AMX).n_bytes == 4096 * 6 * 148  # Q4_K: +4 per 256-value block
    f16 = _tensor("blk.0.attn_q.weight", (576, 576), F16, 576 * 576 * 2)
    assert copy_of(f16, AMX).n_bytes == 576 * 576 * 2 and copy_of(f16, AVX512) is None


def test_amx_refuses_odd_shapes_and_experts_which_fall_to_the_repack_buffer():
    rows_of_8 = _tensor("blk.0.attn_k.weight", (576, 200), Q4_0)  # 200 rows: not a multiple of 32, but of 8
    assert copy_of(rows_of_8, AMX).buffer == "CPU_REPACK"
    k_rows = _tensor("blk.0.ffn_down.weight", (1536, 200), Q4_K)
    assert copy_of(k_rows, AMX).buffer == "CPU_REPACK"
    experts = _tensor("blk.0.ffn_up_exps.weight", (512, 256, 8), Q4_0)  # MUL_MAT_ID: never AMX
    assert copy_of(experts, AMX).buffer == "CPU_REPACK"
    assert copy_of(_tensor("blk.0.ffn_up_exps.weight", (512, 256, 8), Q8_0), AMX) is None


def test_only_matmul_weights_with_rows_in_eights_on_the_cpu_count():
    info = _info(_tensor("token_embd.weight", (576, 49152), Q4_0, 1000),  # GET_ROWS, but tied: the output copy
                 _tensor("blk.0.attn_q.weight", (576, 576), Q4_0, 100),
                 _tensor("blk.0.attn_norm.weight", (576,), F32, 5),
                 _tensor("blk.0.ffn_down.weight", (1536, 576), Q6_K, 70),  # Q6_K: no x86 layout
                 _tensor("blk.1.attn_k.weight", (576, 190), Q4_0, 30),  # 190 rows: not a multiple of 8
                 _tensor("blk.1.ffn_up.weight", (576, 1536), Q4_K, 200))
    cpu = assign_layers(2, 0)
    assert repack_extra_bytes(info, cpu, mmap=True, kernels=AVX2_ONLY) == 1000 + 100 + 200
    # without mmap a copy replaces the original, except the tied output's: the table stays for its look-ups
    assert repack_extra_bytes(info, cpu, mmap=False, kernels=AVX2_ONLY) == 1000
    assert repack_extra_bytes(info, cpu, mmap=True, kernels=NO_AVX2) == 0


def test_layers_on_a_gpu_are_not_copied_and_a_separate_output_counts_where_it_is():
    info = _info(_tensor("token_embd.weight", (576, 49152), Q4_0, 1000),
                 _tensor("output.weight", (576, 49152), Q4_0, 900),
                 _tensor("blk.0.attn_q.weight", (576, 576), Q4_0, 100),
                 _tensor("blk.1.attn_q.weight", (576, 576), Q4_0, 100))
    assert repack_extra_bytes(info, assign_layers(2, 0), mmap=True, kernels=AVX2_ONLY) == 900 + 200  # table: GET_ROWS
    assert repack_extra_bytes(info, assign_layers(2, 1), mmap=True, kernels=AVX2_ONLY) == 200  # the output goes first
    assert repack_extra_bytes(info, assign_layers(2, 2), mmap=True, kernels=AVX2_ONLY) == 100
    assert repack_extra_bytes(info, assign_layers(2, -1), mmap=True, kernels=AVX2_ONLY) == 0  # all on the GPU


def test_one_model_costs_differently_per_build():
    """A Q8_0 model: nothing copied on AVX2 or AVX-512, all of it on an AMX build (bigger, converted); without
    mmap the AMX build still pays the conversion's growth."""
    q8 = 576 * 18 * 34
    info = _info(_tensor("token_embd.weight", (576, 49152), Q8_0, 49152 * 18 * 34),
                 _tensor("output.weight", (576, 49152), Q8_0, 49152 * 18 * 34),
                 _tensor("blk.0.attn_q.weight", (576, 576), Q8_0, q8),
                 _tensor("blk.1.attn_q.weight", (576, 576), Q8_0, q8))
    cpu = assign_layers(2, 0)
    assert repack_extra_bytes(info, cpu, mmap=True, kernels=AVX2_ONLY) == 0
    assert repack_extra_bytes(info, cpu, mmap=True, kernels=AVX512) == 0
    amx = repack_extra_bytes(info, cpu, mmap=True, kernels=AMX)
    assert amx == (49152 + 2 * 576) * 18 * 38
    assert repack_extra_bytes(info, cpu, mmap=False, kernels=AMX) == (49152 + 2 * 576) * 18 * 4
