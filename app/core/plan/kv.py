"""KV cache size: Σ_layers cells × n_head_kv(l) × (key_len × bytes_k + value_len × bytes_v).

Quantized cache types store blocks of 32 values, so their size per element is a fraction
(q8_0: 34 bytes per 32 values). Sizes are kept exact with Fraction and rounded up per layer.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Iterable

from app.core.problem import UserError
from app.core.text import T

# bytes per element of a KV cache tensor, by the names llama.cpp accepts for -ctk / -ctv
CACHE_TYPE_BYTES: dict[str, Fraction] = {
    "f32": Fraction(4),
    "f16": Fraction(2),
    "bf16": Fraction(2),
    "q8_0": Fraction(34, 32),
    "q5_1": Fraction(24, 32),
    "q5_0": Fraction(22, 32),
    "q4_1": Fraction(20, 32),
    "q4_0": Fraction(18, 32),
    "iq4_nl": Fraction(18, 32),
}
# llama.cpp rounds the context (the number of KV cells) up to a multiple of this
KV_CELL_PADDING = 256


def cache_type_bytes(name: str) -> Fraction:
    try:
        return CACHE_TYPE_BYTES[name.lower()]
    except KeyError:
        raise UserError(
            T("Unknown KV cache type '{name}'.", "未知的 KV 缓存类型“{name}”。", name=name),
            T("Use one of: {names}.", "请使用以下之一：{names}。", names=", ".join(CACHE_TYPE_BYTES)),
        ) from None


def padded_cells(ctx: int) -> int:
    """Cells llama.cpp allocates for a context of ``ctx`` tokens."""
    ctx = max(int(ctx), 1)
    return -(-ctx // KV_CELL_PADDING) * KV_CELL_PADDING


def _per_layer(values: Any, n_layer: int) -> list[int]:
    if isinstance(values, (list, tuple)):
        items = [int(v) for v in values]
        if len(items) >= n_layer:
            return items[:n_layer]
        return items + [items[-1] if items else 0] * (n_layer - len(items))
    return [int(values)] * n_layer


def kv_layer_bytes(info: Any, cells: int, type_k: str = "f16", type_v: str = "f16") -> list[int]:
    """KV cache bytes of each layer for ``cells`` cells (already padded / multiplied by sequences)."""
    n_layer = int(info.block_count)
    bytes_k, bytes_v = cache_type_bytes(type_k), cache_type_bytes(type_v)
    per_head = int(info.key_length) * bytes_k + int(info.value_length) * bytes_v  # a Fraction
    num, den = per_head.numerator * int(cells), per_head.denominator
    return [-(-(num * n_kv) // den) for n_kv in _per_layer(info.head_count_kv, n_layer)]


def kv_bytes(info: Any, cells: int, type_k: str = "f16", type_v: str = "f16",
             layers: Iterable[int] | None = None) -> int:
    """Total KV bytes, over all layers or only over ``layers`` (indices)."""
    per_layer = kv_layer_bytes(info, cells, type_k, type_v)
    if layers is None:
        return sum(per_layer)
    return sum(per_layer[i] for i in layers)


def kv_bytes_per_token(info: Any, type_k: str = "f16", type_v: str = "f16") -> Fraction:
    """Bytes one token of context costs in the KV cache (all layers)."""
    n_layer = int(info.block_count)
    bytes_k, bytes_v = cache_type_bytes(type_k), cache_type_bytes(type_v)
    per_head = int(info.key_length) * bytes_k + int(info.value_length) * bytes_v
    return sum((Fraction(n) * per_head for n in _per_layer(info.head_count_kv, n_layer)), Fraction(0))
