"""Which layers hold what in llama.cpp's memory: full-context KV, sliding-window KV, K-only MLA, recurrent state.

Read from the GGUF keys the way llama.cpp's loader reads them (src/llama-model.cpp, src/models/<arch>.cpp,
src/llama-hparams.cpp, b11434):
- sliding window: ``{arch}.attention.sliding_window`` (n_swa) and the layer pattern from
  ``{arch}.attention.sliding_window_pattern`` (a per-layer bool array, or a period) or the arch's default
  period: with period p a layer il is SWA when ``il % p < p - 1`` (``il % p != 0`` for dense-first archs).
- MLA (``{arch}.attention.key_length_mla`` and ``value_length_mla`` set): the cache keeps K only,
  ``key_length`` (= kv_lora_rank + rope dims) × head_count_kv (1) per cell; V is read out of K.
- recurrent layers keep a fixed f32 state per sequence: conv/token-shift rows (n_embd_r) + state rows (n_embd_s).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# arch -> (default period, dense_first, default window or 0, SWA only when the window key is present and > 0)
SWA_ARCHS: dict[str, tuple[int, bool, int, bool]] = {
    "gemma2": (2, False, 4096, False), "gemma3": (6, False, 0, True), "gemma3n": (5, False, 0, False),
    "cohere2": (4, False, 0, False), "cohere2moe": (4, True, 0, False), "gpt-oss": (2, False, 0, False),
    "exaone-moe": (4, False, 128, False), "olmo2": (4, False, 0, True), "plamo3": (8, False, 0, True),
    "mellum": (4, False, 0, True), "afmoe": (4, False, 0, True), "laguna": (4, True, 0, True),
    "muse-glimmer": (4, False, 0, False),
}
# archs whose SWA layers come only from the pattern array
SWA_ARRAY_ARCHS = frozenset({"gemma4", "granite_swa", "maple", "mimo2", "step35", "spark2-5", "dots3note"})
PURE_RECURRENT = frozenset({"mamba", "mamba2", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7"})
# hybrids whose recurrent layers are the ones without KV heads
RECURRENT_WHERE_NO_KV_HEADS = frozenset({"jamba", "granitehybrid", "lfm2", "lfm2moe", "plamo2", "bailingmoe3",
                                         "kimi-linear", "kimi-k3", "glm5-next"})
# hybrids whose recurrent layers are ``recurrent_layers`` or all but every ``full_attention_interval``-th
RECURRENT_BY_INTERVAL = frozenset({"qwen3next", "qwen35", "qwen35moe", "minimax-01", "qwen4exp"})
NEMOTRON_H = frozenset({"nemotron_h", "nemotron_h_moe"})


@dataclass(frozen=True)
class CacheLayout:
    """Per layer: K and V elements per KV cell (0: no KV), whether the layer is SWA, whether it is recurrent."""

    k_elems: tuple[int, ...]
    v_elems: tuple[int, ...]
    swa: tuple[bool, ...]
    recurrent: tuple[bool, ...]
    n_swa: int = 0  # the window in tokens (0: no sliding-window layers)
    state_r: int = 0  # f32 values per sequence of each recurrent layer: conv / token-shift rows (n_embd_r)
    state_s: int = 0  # and the recurrent state itself (n_embd_s)
    mla: bool = False

    @property
    def n_layer(self) -> int:
        return len(self.k_elems)

    @property
    def has_swa(self) -> bool:
        return self.n_swa > 0 and any(self.swa)

    def kv_layers(self, swa: bool) -> list[int]:
        """Layers with KV cells in the full-context cache (swa False) or the sliding-window cache (swa True)."""
        return [il for il in range(self.n_layer)
                if (self.k_elems[il] or self.v_elems[il]) and (self.swa[il] and self.has_swa) == swa]


def _value(info: Any, suffix: str) -> Any:
    arch = getattr(info, "architecture", None) or ""
    key = f"{arch}.{suffix}"
    metadata = getattr(info, "metadata", None) or {}
    if key in metadata:
        return metadata[key]
    return (getattr(info, "arrays", None) or {}).get(key)


def _int(info: Any, suffix: str, default: int = 0) -> int:
    value = _value(info, suffix)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return default
    return int(value)


def _per_layer(values: Any, n_layer: int, default: int = 0) -> list[int]:
    if isinstance(values, (list, tuple)):
        items = [int(v) for v in values][:n_layer]
        return items + [items[-1] if items else default] * (n_layer - len(items))
    if values is None:
        return [default] * n_layer
    return [int(values)] * n_layer


def _pattern(period: int, dense_first: bool, n_layer: int) -> list[bool]:
    """llama_hparams::set_swa_pattern: period 0 = every layer SWA."""
    if period <= 0:
        return [True] * n_layer
    if dense_first:
        return [il % period != 0 for il in range(n_layer)]
    return [il % period < period - 1 for il in range(n_layer)]


def swa_pattern(info: Any, n_layer: int) -> tuple[int, list[bool]]:
    """(n_swa, is_swa per layer) as llama.cpp derives them; (0, all False) without sliding-window layers."""
    arch = getattr(info, "architecture", None) or ""
    window = _int(info, "attention.sliding_window", -1)
    pattern_value = _value(info, "attention.sliding_window_pattern")
    if arch in SWA_ARRAY_ARCHS:
        if window <= 0 or not isinstance(pattern_value, (list, tuple)):
            return 0, [False] * n_layer
        return window, [bool(v) for v in pattern_value[:n_layer]] + [False] * (n_layer - len(pattern_value))
    if arch == "llama4":  # chunked attention, 3 chunked : 1 full; a window key of 0 turns it off
        return (0, [False] * n_layer) if window == 0 else (8192, _pattern(4, False, n_layer))
    if arch == "smallthinker":
        return (4096, _pattern(4, True, n_layer)) if window > 0 else (0, [False] * n_layer)
    if arch == "exaone4":
        if n_layer != 64 and window <= 0:
            return 0, [False] * n_layer
        period, dense_first, default_window, needs_key = 4, False, 4096, False
    elif arch in SWA_ARCHS:
        period, dense_first, default_window, needs_key = SWA_ARCHS[arch]
    else:
        return 0, [False] * n_layer
    if needs_key and window <= 0:
        return 0, [False] * n_layer
    n_swa = window if window > 0 else default_window
    if n_swa <= 0:
        return 0, [False] * n_layer
    if isinstance(pattern_value, (list, tuple)):
        flags = [bool(v) for v in pattern_value[:n_layer]]
        return n_swa, flags + [False] * (n_layer - len(flags))
    if isinstance(pattern_value, (int, float)) and not isinstance(pattern_value, bool):
        period = int(pattern_value)
    return n_swa, _pattern(period, dense_first, n_layer)


def recurrent_layers(info: Any, n_layer: int, heads_kv: list[int]) -> list[bool]:
    arch = getattr(info, "architecture", None) or ""
    if arch in PURE_RECURRENT or arch == "falcon-h1":
        return [True] * n_layer
    if arch in RECURRENT_WHERE_NO_KV_HEADS:
        return [n == 0 for n in heads_kv]
    if arch in NEMOTRON_H:
        n_ff = _per_layer(_value(info, "feed_forward_length"), n_layer)
        return [heads_kv[il] == 0 and n_ff[il] == 0 for il in range(n_layer)]
    if arch in RECURRENT_BY_INTERVAL:
        listed = _value(info, "attention.recurrent_layers")
        if isinstance(listed, (list, tuple)) and listed:
            flags = [bool(v) for v in listed[:n_layer]]
            return flags + [False] * (n_layer - len(flags))
        interval = _int(info, "full_attention_interval", 4) or 4
        return [(il + 1) % interval != 0 for il in range(n_layer)]
    return [False] * n_layer


def recurrent_state(info: Any) -> tuple[int, int]:
    """(n_embd_r, n_embd_s): f32 values per sequence of one recurrent layer (llama_hparams::n_embd_r / n_embd_s)."""
    n_embd = int(getattr(info, "embedding_length", 0) or 0)
    wkv_head = _int(info, "wkv.head_size")
    if wkv_head:  # RWKV: token shift rows + the wkv state
        return _int(info, "token_shift_count", 2) * n_embd, n_embd * wkv_head
    l_cache = _int(info, "shortconv.l_cache")
    d_state, d_inner = _int(info, "ssm.state_size"), _int(info, "ssm.inner_size")
    if l_cache:  # LFM2 short convolutions
        return n_embd * (l_cache - 1), d_state * d_inner
    d_conv, n_group = _int(info, "ssm.conv_kernel"), _int(info, "ssm.group_count")
    return max(d_conv - 1, 0) * (d_inner + 2 * n_group * d_state), d_state * d_inner


def cache_layout(info: Any) -> CacheLayout:
    """The KV / state layout of the layers the main context runs (MTP / NextN layers excluded)."""
    n_layer_all = int(info.block_count)
    n_layer = max(n_layer_all - _int(info, "nextn_predict_layers"), 0)
    heads_kv = _per_layer(info.head_count_kv, n_layer_all)[:n_layer]
    n_swa, swa = swa_pattern(info, n_layer)
    recurrent = recurrent_layers(info, n_layer, heads_kv)
    mla = _int(info, "attention.key_length_mla") > 0 and _int(info, "attention.value_length_mla") > 0
    key_len, value_len = int(info.key_length or 0), int(info.value_length or 0)
    if mla and not key_len:
        key_len = _int(info, "attention.kv_lora_rank") + _int(info, "rope.dimension_count")
    key_swa = _int(info, "attention.key_length_swa") or key_len
    value_swa = _int(info, "attention.value_length_swa") or value_len
    # the last layers reuse earlier layers' KV: gemma4 from the key, gemma3n from layer 20 (models/gemma3n.cpp)
    shared = _int(info, "attention.shared_kv_layers")
    kv_from = n_layer_all - shared if shared else n_layer
    if getattr(info, "architecture", None) == "gemma3n":
        kv_from = min(kv_from, 20)
    k_elems, v_elems = [], []
    for il in range(n_layer):
        has_kv = not recurrent[il] or getattr(info, "architecture", None) == "falcon-h1"
        if il >= kv_from or not has_kv:
            k_elems.append(0)
            v_elems.append(0)
            continue
        k_len, v_len = (key_swa, value_swa) if swa[il] and n_swa else (key_len, value_len)
        k_elems.append(heads_kv[il] * k_len)
        v_elems.append(0 if mla else heads_kv[il] * v_len)
    state_r, state_s = recurrent_state(info) if any(recurrent) else (0, 0)
    return CacheLayout(tuple(k_elems), tuple(v_elems), tuple(swa), tuple(recurrent), n_swa, state_r, state_s, mla)
