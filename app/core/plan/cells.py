"""How many KV cells and sequences the engine allocates for a launch config (llama.cpp b11434).

llama-context.cpp: n_ctx is padded to 256; a unified cache has one stream of n_ctx cells, otherwise every
sequence (slot) gets its own stream of pad256(n_ctx / n_seq) cells. llama-kv-cache-iswa.cpp: the
sliding-window cache holds pad256(min(n_ctx_seq, n_swa × (n_seq if unified else 1) + n_ubatch)) cells per
stream, or as many as the full cache with ``--swa-full``. Recurrent state: one row per sequence.

What each engine runs with:
- llama-server: the app always passes ``-np N`` (config.parallel), so N slots, KV not unified, unless the
  user's extra arguments say otherwise; ``-np -1`` (auto) is 4 slots sharing one unified cache. The SWA
  cache is window-sized unless ``--swa-full``.
- llama-cpp-python: one sequence. llama_context_default_params() has swa_full = true and its server has no
  option for it; the app starts it through app/core/launch/embedded_server.py, which sets swa_full = false
  unless the user's extra arguments say ``--swa_full true``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from app.core.launch.config import BACKEND_LLAMA_SERVER, LaunchConfig
from app.core.plan.kv import KV_CELL_PADDING, cache_type_bytes, padded_cells
from app.core.plan.layout import CacheLayout

AUTO_SLOTS = 4  # llama-server -np -1 (auto): 4 slots and a unified KV cache


@dataclass(frozen=True)
class Sequences:
    n_seq: int
    unified: bool
    swa_full: bool


@dataclass(frozen=True)
class Cells:
    """Cells per stream of the full-context and the sliding-window cache; streams = 1 when unified."""

    full: int
    swa: int
    streams: int
    n_seq: int
    ubatch: int

    @property
    def full_total(self) -> int:
        return self.full * self.streams

    @property
    def swa_total(self) -> int:
        return self.swa * self.streams


def _last_flag(args: list[str], names: tuple[str, ...]) -> int | None:
    """Index of the last occurrence of any of ``names`` (also as ``--name=value``), None if absent."""
    found = None
    for i, arg in enumerate(args):
        if arg in names or any(arg.startswith(n + "=") for n in names if n.startswith("--")):
            found = i
    return found


def _flag_value(args: list[str], names: tuple[str, ...]) -> str | None:
    i = _last_flag(args, names)
    if i is None:
        return None
    if "=" in args[i]:
        return args[i].split("=", 1)[1]
    return args[i + 1] if i + 1 < len(args) else None


def sequences(config: LaunchConfig) -> Sequences:
    """Sequences, unified KV and full-size SWA cache as the engine will run ``config`` (argv as the app builds it)."""
    args = [str(a) for a in config.extra_args]
    if config.backend != BACKEND_LLAMA_SERVER:
        return Sequences(1, False, (_flag_value(args, ("--swa_full",)) or "false").lower() == "true")
    parallel = int(config.parallel)
    value = _flag_value(args, ("-np", "--parallel"))
    if value is not None and value.lstrip("-").isdigit():
        parallel = int(value)
    unified = parallel < 0
    n_seq = AUTO_SLOTS if parallel < 0 else max(parallel, 1)
    on, off = _last_flag(args, ("-kvu", "--kv-unified")), _last_flag(args, ("-no-kvu", "--no-kv-unified"))
    if on is not None or off is not None:
        unified = (-1 if on is None else on) > (-1 if off is None else off)
    swa_full = _last_flag(args, ("--swa-full",)) is not None
    return Sequences(n_seq, unified, swa_full)


def kv_offloaded(config: LaunchConfig) -> bool:
    """KV cache (and recurrent state) of an offloaded layer on its GPU: yes unless llama-server got -nkvo."""
    if config.backend != BACKEND_LLAMA_SERVER:
        return True
    args = [str(a) for a in config.extra_args]
    return _last_flag(args, ("-nkvo", "--no-kv-offload")) is None


def micro_batch(config: LaunchConfig, ctx: int) -> int:
    """n_ubatch as llama.cpp sets it: min(ubatch, min(batch, n_ctx))."""
    return max(1, min(int(config.ubatch), int(config.batch), int(ctx)))


def cells_for(config: LaunchConfig, ctx: int, layout: CacheLayout) -> Cells:
    seqs = sequences(config)
    n_ctx = padded_cells(ctx)
    if seqs.unified or seqs.n_seq == 1:
        per_stream, streams = n_ctx, 1
    else:
        per_stream, streams = padded_cells(max(n_ctx // seqs.n_seq, 1)), seqs.n_seq
    ubatch = micro_batch(config, ctx)
    swa = per_stream
    if layout.has_swa and not seqs.swa_full:
        wanted = layout.n_swa * (seqs.n_seq if streams == 1 else 1) + ubatch
        swa = -(-min(per_stream, wanted) // KV_CELL_PADDING) * KV_CELL_PADDING
    return Cells(per_stream, swa, streams, seqs.n_seq, ubatch)


STATE_BYTES = 4  # recurrent state is always f32 (llama-model.cpp: GGML_TYPE_F32 for r and s)


def _row_bytes(elems: int, per_elem) -> int:
    """ggml_row_size: one cell's K (or V) of a layer; quantized rows are whole blocks (ceil)."""
    value = elems * per_elem
    return -(-value.numerator // value.denominator)


def cache_layer_bytes(layout: CacheLayout, cells: Cells, type_k: str = "f16", type_v: str = "f16",
                      flash_attn: bool = True) -> list[int]:
    """Bytes of KV cache and recurrent state each layer holds (on the device that runs the layer).

    Without flash attention V is stored transposed and padded to the widest layer's V (TAG_V_CACHE_VARIABLE).
    """
    bytes_k, bytes_v = cache_type_bytes(type_k), cache_type_bytes(type_v)
    v_max = max(layout.v_elems, default=0)
    state = (layout.state_r + layout.state_s) * STATE_BYTES * max(cells.n_seq, 1)
    result = []
    for il in range(layout.n_layer):
        k, v = layout.k_elems[il], layout.v_elems[il]
        size = 0
        if k or v:
            if v and not flash_attn:
                v = v_max
            n = cells.swa_total if layout.swa[il] and layout.has_swa else cells.full_total
            size = n * (_row_bytes(k, bytes_k) + _row_bytes(v, bytes_v))
        if layout.recurrent[il]:
            size += state
        result.append(int(size))
    return result


def context_bytes_per_token(layout: CacheLayout, config: LaunchConfig, type_k: str = "f16",
                            type_v: str = "f16") -> Fraction:
    """KV bytes one more token of context costs: the full-context layers only (window-sized SWA layers and
    recurrent state do not grow with the context), SWA layers too where the engine keeps them full-size."""
    bytes_k, bytes_v = cache_type_bytes(type_k), cache_type_bytes(type_v)
    grows = layout.kv_layers(swa=False) + (layout.kv_layers(swa=True) if sequences(config).swa_full else [])
    return sum((layout.k_elems[il] * bytes_k + layout.v_elems[il] * bytes_v for il in grows), Fraction(0))


CHECKPOINTS_MAX = 32  # llama-server --ctx-checkpoints (common.h n_ctx_checkpoints)
CHECKPOINT_SPACING = 8192  # checkpoint_min_step: tokens between two checkpoints of one conversation


def checkpoint_size(layout: CacheLayout, cells: Cells, config: LaunchConfig, type_k: str = "f16",
                    type_v: str = "f16") -> int:
    """One context checkpoint of llama-server (0: the model needs none, or another engine)."""
    if config.backend != BACKEND_LLAMA_SERVER:
        return 0
    bytes_k, bytes_v = cache_type_bytes(type_k), cache_type_bytes(type_v)
    size = sum(layout.recurrent) * (layout.state_r + layout.state_s) * STATE_BYTES
    if layout.has_swa and not sequences(config).swa_full:
        row = sum(_row_bytes(layout.k_elems[il], bytes_k) + _row_bytes(layout.v_elems[il], bytes_v)
                  for il in layout.kv_layers(swa=True))
        size += min(layout.n_swa, cells.swa) * row
    return size


def checkpoint_bytes(layout: CacheLayout, cells: Cells, config: LaunchConfig, type_k: str = "f16",
                     type_v: str = "f16") -> int:
    """Host RAM of llama-server's context checkpoints (tools/server/server-context.cpp create_checkpoint).

    For memory that cannot be rolled back (sliding-window layers, recurrent state) every prompt leaves two
    checkpoints (4 + n_ubatch and 4 tokens before its end) and a conversation one more per 8192 tokens, up to 32
    per slot. One holds the window's cells of the SWA layers (gemma3, window 512, 4 SWA layers: 1.006 MiB as the
    server printed) and the recurrent state of one sequence (granitehybrid: 0.265 MiB).
    """
    per_slot = min(CHECKPOINTS_MAX, 2 + cells.full // CHECKPOINT_SPACING)
    return checkpoint_size(layout, cells, config, type_k, type_v) * per_slot * max(cells.n_seq, 1)
