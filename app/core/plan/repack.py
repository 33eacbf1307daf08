"""Weights llama.cpp's CPU backend re-lays for its fast kernels (the ``CPU_REPACK`` buffer), and what that costs.

ggml-cpu's ``ggml_repack_get_optimal_repack_type`` (ggml/src/ggml-cpu/repack.cpp, b11434) takes a weight used by a
matrix multiplication (MUL_MAT / MUL_MAT_ID: the layers' projections, the experts, the output matrix — a tied
output is a second tensor over ``token_embd``; never a GET_ROWS table or a norm) into the repack buffer when its
type has a layout for this processor and its row count ``ne[1]`` is a multiple of 8. On x86 with AVX2: Q4_0, Q4_K,
IQ4_NL and MXFP4 (Q2_K too with AVX-512). On Arm with NEON dot-product / i8mm: Q4_0, Q4_K, Q5_K, Q6_K, IQ4_NL,
MXFP4, Q8_0 (rows a multiple of 4 for the 4-row layouts; counted at 8 here, the common case).

With the file memory-mapped (the default) the copy does not replace the original: the loader reads the original
through the mapping to repack it, and only the mapping's ends are unmapped afterwards, so those pages stay resident
too. Measured: SmolLM2-135M quantized to Q4_0, llama-server -c 4096, peak RSS 271 MiB after a 3,300-token prompt,
against 220 MiB for the same model in Q4_1, whose weights are larger but not repacked. Without mmap the tensor is
read once, into the copy: nothing extra.
"""

from __future__ import annotations

import functools
from typing import Any, Iterable

from app.core.plan.layers import CPU, LayerAssignment, is_output_tensor

Q4_0, Q8_0, Q2_K, Q4_K, Q5_K, Q6_K, IQ4_NL, MXFP4 = 2, 8, 10, 12, 13, 14, 20, 39
X86_AVX2 = frozenset({Q4_0, Q4_K, IQ4_NL, MXFP4})
ARM_DOTPROD = frozenset({Q4_0, Q4_K, Q5_K, Q6_K, IQ4_NL, MXFP4, Q8_0})
ROWS_MULTIPLE = 8


def repacked_types(flags: Iterable[str]) -> frozenset[int]:
    """The weight types this processor's CPU backend repacks (by its /proc/cpuinfo-style flags)."""
    flags = set(flags)
    types = set()
    if "avx2" in flags:
        types |= X86_AVX2
        if "avx512f" in flags:
            types.add(Q2_K)
    if "asimddp" in flags or "i8mm" in flags:
        types |= ARM_DOTPROD
    return frozenset(types)


@functools.cache
def this_machines_repacked_types() -> frozenset[int]:
    from app.core.hardware.cpu import read_cpu

    return repacked_types(read_cpu().flags)


def _is_matmul_weight(name: str, shape: tuple[int, ...]) -> bool:
    if len(shape) < 2 or not name.endswith(".weight"):
        return False
    if name.startswith("blk."):
        return "_norm" not in name and "ffn_gate_inp" not in name  # the router is F32 and small: not repacked
    return is_output_tensor(name) and not name.startswith("output_norm")


def repack_extra_bytes(info: Any, assignment: LayerAssignment, *, mmap: bool,
                       types: frozenset[int] | None = None) -> int:
    """RAM the repacked copies add beyond the weights the plan already counts: their bytes once more when the file
    is memory-mapped (original pages and copy both resident), 0 without mmap or for a processor without layouts."""
    types = this_machines_repacked_types() if types is None else types
    if not mmap or not types:
        return 0
    extra = 0
    tied = not any(t.name == "output.weight" for t in info.tensors)
    for tensor in info.tensors:
        name, rows = tensor.name, tensor.shape[1] if len(tensor.shape) > 1 else 0
        if tensor.type_id not in types or rows % ROWS_MULTIPLE or not tensor.n_bytes:
            continue
        layer = tensor.layer
        on_cpu = assignment.layer_device[layer] == CPU if layer is not None and layer < assignment.n_layer \
            else assignment.output_device == CPU
        is_output = name == "token_embd.weight" and tied  # the tied output: a repacked copy of the table
        if on_cpu and (_is_matmul_weight(name, tuple(tensor.shape)) or is_output):
            extra += int(tensor.n_bytes)
    return extra
