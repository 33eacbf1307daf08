"""Which weights llama.cpp's CPU backend repacks, and the RAM that costs with the file memory-mapped."""

from __future__ import annotations

from types import SimpleNamespace

from app.core.gguf.model_info import TensorInfo
from app.core.plan.layers import assign_layers
from app.core.plan.repack import IQ4_NL, Q2_K, Q4_0, Q4_K, Q8_0, repack_extra_bytes, repacked_types

F32, Q6_K = 0, 14


def _info(*tensors: tuple[str, tuple[int, ...], int, int], n_layer: int = 2):
    table = [TensorInfo(name, shape, type_id, 0, size) for name, shape, type_id, size in tensors]
    return SimpleNamespace(tensors=table, block_count=n_layer)


def test_the_types_each_processor_repacks():
    assert repacked_types(["sse4_2", "avx", "avx2", "fma"]) == {Q4_0, Q4_K, IQ4_NL, 39}
    assert Q2_K in repacked_types(["avx2", "avx512f"])
    assert {Q4_0, Q8_0, Q6_K} <= repacked_types(["neon", "asimd", "asimddp"])
    assert repacked_types(["sse4_2", "avx"]) == frozenset()  # no AVX2: no layouts, nothing repacked


def test_only_matmul_weights_of_repacked_types_with_rows_in_eights_on_the_cpu_count():
    info = _info(("token_embd.weight", (576, 49152), Q4_0, 1000),  # a GET_ROWS table, but tied: the output copy
                 ("blk.0.attn_q.weight", (576, 576), Q4_0, 100),
                 ("blk.0.attn_norm.weight", (576,), F32, 5),
                 ("blk.0.ffn_down.weight", (1536, 576), Q6_K, 70),  # Q6_K: no x86 layout
                 ("blk.1.attn_k.weight", (576, 190), Q4_0, 30),  # 190 rows: not a multiple of 8
                 ("blk.1.ffn_up.weight", (576, 1536), Q4_K, 200))
    types = repacked_types(["avx2"])
    cpu = assign_layers(2, 0)
    assert repack_extra_bytes(info, cpu, mmap=True, types=types) == 1000 + 100 + 200
    assert repack_extra_bytes(info, cpu, mmap=False, types=types) == 0  # read once, into the copy
    assert repack_extra_bytes(info, cpu, mmap=True, types=frozenset()) == 0


def test_layers_on_a_gpu_are_not_repacked_and_a_separate_output_counts_where_it_is():
    info = _info(("token_embd.weight", (576, 49152), Q4_0, 1000), ("output.weight", (576, 49152), Q4_0, 900),
                 ("blk.0.attn_q.weight", (576, 576), Q4_0, 100), ("blk.1.attn_q.weight", (576, 576), Q4_0, 100))
    types = repacked_types(["avx2"])
    assert repack_extra_bytes(info, assign_layers(2, 0), mmap=True, types=types) == 900 + 200  # table: GET_ROWS
    assert repack_extra_bytes(info, assign_layers(2, 1), mmap=True, types=types) == 200  # the output goes first
    assert repack_extra_bytes(info, assign_layers(2, 2), mmap=True, types=types) == 100
    assert repack_extra_bytes(info, assign_layers(2, -1), mmap=True, types=types) == 0  # all on the GPU
