"""The shapes of mixture-of-experts models people run on small cards, as tensor tables without weights.

A simulated probe (tests, ``benchmarks/bench_moe.py``) needs the plan's view of a 17 GB model, not its bytes: every
tensor's name, layer and size as a Q4_K_M file of that model has them (sizes from the published shapes: hidden size,
layers, heads, experts, expert feed-forward length; ~4.5 bits per weight for the experts and attention, Q6_K output).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.gguf.model_info import ModelInfo, TensorInfo

Q4_K_BITS = 4.5
Q6_K_BITS = 6.5625
F32_BITS = 32


@dataclass(frozen=True)
class MoeShape:
    name: str
    architecture: str
    n_layer: int
    n_embd: int
    n_head: int
    n_head_kv: int
    head_dim: int
    vocab: int
    n_expert: int
    n_expert_used: int
    expert_ff: int  # feed-forward length of one expert
    context_length: int


QWEN3_30B_A3B = MoeShape("Qwen3-30B-A3B", "qwen3moe", 48, 2048, 32, 4, 128, 151936, 128, 8, 768, 40960)
GPT_OSS_20B = MoeShape("gpt-oss-20b", "gpt-oss", 24, 2880, 64, 8, 64, 201088, 32, 4, 2880, 131072)
SHAPES = (QWEN3_30B_A3B, GPT_OSS_20B)


def _bytes(elements: int, bits: float) -> int:
    return int(elements * bits / 8)


def _layer_tensors(shape: MoeShape, il: int) -> list[tuple[str, int]]:
    q = shape.n_head * shape.head_dim
    kv = shape.n_head_kv * shape.head_dim
    experts = shape.n_expert * shape.n_embd * shape.expert_ff
    return [
        (f"blk.{il}.attn_norm.weight", _bytes(shape.n_embd, F32_BITS)),
        (f"blk.{il}.attn_q.weight", _bytes(shape.n_embd * q, Q4_K_BITS)),
        (f"blk.{il}.attn_k.weight", _bytes(shape.n_embd * kv, Q4_K_BITS)),
        (f"blk.{il}.attn_v.weight", _bytes(shape.n_embd * kv, Q6_K_BITS)),
        (f"blk.{il}.attn_output.weight", _bytes(q * shape.n_embd, Q4_K_BITS)),
        (f"blk.{il}.ffn_norm.weight", _bytes(shape.n_embd, F32_BITS)),
        (f"blk.{il}.ffn_gate_inp.weight", _bytes(shape.n_embd * shape.n_expert, F32_BITS)),
        (f"blk.{il}.ffn_gate_exps.weight", _bytes(experts, Q4_K_BITS)),
        (f"blk.{il}.ffn_up_exps.weight", _bytes(experts, Q4_K_BITS)),
        (f"blk.{il}.ffn_down_exps.weight", _bytes(experts, Q6_K_BITS)),
    ]


def moe_info(shape: MoeShape, path: str = "simulated-moe.gguf") -> ModelInfo:
    """The plan's view of ``shape`` as a Q4_K_M file: metadata and a tensor table whose sizes add up."""
    named = [("token_embd.weight", _bytes(shape.vocab * shape.n_embd, Q4_K_BITS)),
             ("output_norm.weight", _bytes(shape.n_embd, F32_BITS)),
             ("output.weight", _bytes(shape.vocab * shape.n_embd, Q6_K_BITS))]
    for il in range(shape.n_layer):
        named += _layer_tensors(shape, il)
    tensors, offset = [], 0
    for name, size in named:
        tensors.append(TensorInfo(name, (size,), 0, offset, size))
        offset += size
    layer_bytes = [0] * shape.n_layer
    non_layer: dict[str, int] = {}
    for tensor in tensors:
        if tensor.layer is None:
            non_layer[tensor.name] = int(tensor.n_bytes or 0)
        else:
            layer_bytes[tensor.layer] += int(tensor.n_bytes or 0)
    arch = shape.architecture
    return ModelInfo(
        path=path, file_size=offset, version=3, big_endian=False, alignment=32, architecture=arch, name=shape.name,
        file_type=15, file_type_name="MOSTLY_Q4_K_M", parameter_count=0, context_length=shape.context_length,
        embedding_length=shape.n_embd, block_count=shape.n_layer, head_count=[shape.n_head] * shape.n_layer,
        head_count_kv=[shape.n_head_kv] * shape.n_layer, key_length=shape.head_dim, value_length=shape.head_dim,
        vocab_size=shape.vocab, has_chat_template=True, tensor_types={}, layer_bytes=layer_bytes,
        non_layer_bytes=non_layer, tensors=tensors, data_offset=0, data_end=offset, split_no=None, split_count=None,
        split_tensors_count=None, tensor_data_bytes=offset,
        metadata={f"{arch}.expert_count": shape.n_expert, f"{arch}.expert_used_count": shape.n_expert_used,
                  f"{arch}.expert_feed_forward_length": shape.expert_ff, f"{arch}.block_count": shape.n_layer},
    )
