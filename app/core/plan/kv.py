"""KV cache element sizes and llama.cpp's cell padding.

KV bytes = Σ_layers cells(l) × (K values(l) × bytes_k + V values(l) × bytes_v); which layers hold how many
cells (full context, sliding window, none) is app.core.plan.layout and app.core.plan.cells. Quantized cache
types store blocks of 32 values, so their size per element is a fraction (q8_0: 34 bytes per 32 values).
"""

from __future__ import annotations

from fractions import Fraction

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
