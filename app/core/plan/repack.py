"""Weights llama.cpp's CPU backend copies into its extra buffers for faster kernels, and what that costs.

The loader offers each weight to the CPU's extra buffer types in order (ggml-cpu.cpp: AMX, KleidiAI, CPU_REPACK)
and the first whose ``supports_op`` takes the weight's operation keeps a copy of it (llama-model.cpp
select_weight_buft). Which buffers exist and what they take is decided when the engine is compiled
(app.core.plan.cpu_kernels), per llama.cpp b11434:

- AMX (``__AMX_INT8__`` and ``__AVX512VNNI__``; ggml-cpu/amx/amx.cpp): a MUL_MAT weight (never the experts'
  MUL_MAT_ID) with rows a multiple of 32 and a row length a multiple of 32 (Q4_0, Q4_1, Q8_0), 256 (Q4_K, Q5_K,
  Q6_K, IQ4_XS) or 16 (F16, copied as is). The quantized ones are converted to a VNNI layout whose rows carry
  per-block extras (mmq.cpp get_row_size: +4 bytes per block for Q8_0, Q4_K and Q5_K, +2 for IQ4_XS).
- KleidiAI (Arm builds with GGML_CPU_KLEIDIAI, off by default): Q4_0 and Q8_0 MUL_MAT weights.
- CPU_REPACK (GGML_CPU_REPACK, on by default; repack.cpp ggml_repack_get_optimal_repack_type): a 2-D MUL_MAT or
  3-D MUL_MAT_ID weight whose type has an interleaved layout for the compiled instruction set and whose rows
  ``ne[1]`` are a multiple of 8: with AVX2, Q4_0, Q4_K, IQ4_NL and MXFP4, and Q2_K with AVX-512; on Arm with
  dot-product or i8mm, Q4_0, Q4_K, Q5_K, Q6_K, IQ4_NL, MXFP4 and Q8_0 (rows a multiple of 4 for the 4-row layouts;
  counted at 8 here, the common case). Same size as the original.

Matrix-multiplication weights are the layers' projections, the experts and the output matrix (a tied output is a
second tensor over ``token_embd``); never a GET_ROWS table or a norm. With the file memory-mapped (the default)
the copy does not replace the original: the loader reads the original through the mapping to copy it, and only
the mapping's ends are unmapped afterwards, so those pages stay resident too. Measured: SmolLM2-135M quantized to
Q4_0, llama-server -c 4096 on an AVX2 build, peak RSS 271 MiB after a 3,300-token prompt, against 220 MiB for the
same model in Q4_1, whose weights are larger but not repacked. Without mmap the tensor is read once, into the
copy: only a conversion's growth is extra.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.gguf.quant_types import type_info
from app.core.plan.cpu_kernels import CpuKernels
from app.core.plan.layers import CPU, LayerAssignment, is_output_tensor

F16, Q4_0, Q4_1, Q8_0, Q2_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, MXFP4 = 1, 2, 3, 8, 10, 12, 13, 14, 20, 23, 39
REPACK_ROWS = 8

# AMX: row-length multiple per type, and extra bytes per block of the converted layout (amx/mmq.cpp)
AMX_ROW_LENGTH = {Q4_0: 32, Q4_1: 32, Q8_0: 32, Q4_K: 256, Q5_K: 256, Q6_K: 256, IQ4_XS: 256, F16: 16}
AMX_BLOCK_EXTRA = {Q8_0: 4, Q4_K: 4, Q5_K: 4, IQ4_XS: 2}
AMX_ROWS = 32  # 2 × TILE_N
KLEIDIAI_TYPES = frozenset({Q4_0, Q8_0})


def repack_types(kernels: CpuKernels) -> frozenset[int]:
    """The weight types the CPU_REPACK buffer takes with these kernels."""
    if not kernels.repack:
        return frozenset()
    types = set()
    if kernels.avx2:
        types |= {Q4_0, Q4_K, IQ4_NL, MXFP4}
    if kernels.avx512:
        types.add(Q2_K)
    if kernels.arm_dotprod or kernels.arm_i8mm:
        types |= {Q4_0, Q4_K, Q5_K, Q6_K, IQ4_NL, MXFP4, Q8_0}
    return frozenset(types)


@dataclass(frozen=True)
class Copy:
    """One weight held in an extra buffer: which one and its size there."""

    buffer: str  # "AMX", "KleidiAI" or "CPU_REPACK", as llama.cpp names the buffer
    n_bytes: int


def _n_dims(shape: tuple[int, ...]) -> int:
    """ggml_n_dims: the number of dimensions up to the last one longer than 1."""
    return max((i + 1 for i, n in enumerate(shape) if n > 1), default=1)


def _amx_bytes(tensor: Any) -> int:
    if tensor.type_id == F16:
        return int(tensor.n_bytes)
    kind = type_info(tensor.type_id)
    assert kind is not None  # AMX_ROW_LENGTH lists known types only
    blocks = int(tensor.shape[0]) // kind.block_size
    return int(tensor.shape[1]) * blocks * (kind.type_size + AMX_BLOCK_EXTRA.get(tensor.type_id, 0))


def _amx_takes(tensor: Any, experts: bool) -> bool:
    multiple = AMX_ROW_LENGTH.get(tensor.type_id)
    return (not experts and multiple is not None and len(tensor.shape) == 2
            and tensor.shape[0] % multiple == 0 and tensor.shape[1] % AMX_ROWS == 0)


def copy_of(tensor: Any, kernels: CpuKernels) -> Copy | None:
    """Where the CPU backend copies this matrix-multiplication weight, or None (it is used in place)."""
    if not tensor.n_bytes or len(tensor.shape) < 2:
        return None
    experts = "_exps." in tensor.name or "_chexps." in tensor.name
    if kernels.amx and _amx_takes(tensor, experts):
        return Copy("AMX", _amx_bytes(tensor))
    if kernels.kleidiai and not experts and tensor.type_id in KLEIDIAI_TYPES:
        return Copy("KleidiAI", int(tensor.n_bytes))
    if (tensor.type_id in repack_types(kernels) and tensor.shape[1] % REPACK_ROWS == 0
            and _n_dims(tensor.shape) == (3 if experts else 2)):
        return Copy("CPU_REPACK", int(tensor.n_bytes))
    return None


def _is_matmul_weight(name: str) -> bool:
    if not name.endswith(".weight"):
        return False
    if name.startswith("blk."):
        return "_norm" not in name and "ffn_gate_inp" not in name  # the router is F32 and small: not copied
    return is_output_tensor(name) and not name.startswith("output_norm")


def copies(info: Any, assignment: LayerAssignment, kernels: CpuKernels) -> list[tuple[str, Copy]]:
    """Every weight on the CPU that an extra buffer holds a copy of, by name (``token_embd.weight`` stands for a
    tied output matrix)."""
    found = []
    tied = not any(t.name == "output.weight" for t in info.tensors)
    for tensor in info.tensors:
        layer = tensor.layer
        on_cpu = assignment.layer_device[layer] == CPU if layer is not None and layer < assignment.n_layer \
            else assignment.output_device == CPU
        is_tied_output = tensor.name == "token_embd.weight" and tied
        if not on_cpu or not (_is_matmul_weight(tensor.name) or is_tied_output):
            continue
        copy = copy_of(tensor, kernels)
        if copy is not None:
            found.append((tensor.name, copy))
    return found


def repack_extra_bytes(info: Any, assignment: LayerAssignment, *, mmap: bool, kernels: CpuKernels) -> int:
    """RAM the copies add beyond the weights the plan already counts: all of each copy when the file is
    memory-mapped (original pages and copy both resident), and of a tied output's (the table stays for its
    look-ups); otherwise only what a conversion adds."""
    sizes = {t.name: int(t.n_bytes or 0) for t in info.tensors}
    extra = 0
    for name, copy in copies(info, assignment, kernels):
        whole = mmap or name == "token_embd.weight"
        extra += copy.n_bytes if whole else max(copy.n_bytes - sizes[name], 0)
    return extra
