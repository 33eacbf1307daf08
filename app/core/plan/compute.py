"""Compute buffers and fixed overheads: the parts of a load that are not weights or KV cache.

llama.cpp reserves its compute buffer at context creation for the worst-case micro-batch. The
allocator reuses memory between graph nodes, so the buffer is about the largest single
intermediate plus a few activations of the residual stream:
  attention scores without flash attention: 4 × ubatch × ctx × n_head bytes (+ the KQ mask, ubatch × ctx),
  logits: 4 × ubatch × n_vocab, feed-forward: 2 × 4 × ubatch × n_ff.
A partial offload computes on both sides and copies between them; other tools measured its GPU
buffer at 1.2-2.7× a full offload (gguf-parser-go #45), so we use 1.5× on the GPU then.
"""

from __future__ import annotations

from typing import Any

from app.core.launch.config import BACKEND_LLAMA_SERVER, LaunchConfig

MiB = 1024 * 1024

# VRAM a CUDA context takes before any tensor (Ollama measured 457 MiB; gguf-parser uses 250 MiB)
GPU_CONTEXT_BYTES = 457 * MiB
# host RAM the CUDA runtime and driver add to the server process when a GPU is used (estimate)
GPU_HOST_OVERHEAD_BYTES = 300 * MiB
# resident memory of the server process itself with a tiny model, measured on Linux x86-64
# (llama-server b11434 and llama-cpp-python 0.3.36 server, tiny 2-layer model, after one request)
BACKEND_BASELINE_RSS = {
    BACKEND_LLAMA_SERVER: 22 * MiB,
    "embedded": 88 * MiB,
}
PARTIAL_OFFLOAD_FACTOR = 1.5
RESIDUAL_ACTIVATIONS = 4  # live n_ubatch × n_embd f32 tensors besides the largest intermediate


def flash_attention_on(config: LaunchConfig) -> bool:
    """What the backend does when flash attention is left at its default."""
    if config.flash_attn is not None:
        return bool(config.flash_attn)
    # llama-server defaults to -fa auto (on where supported); llama-cpp-python defaults to off
    return config.backend == BACKEND_LLAMA_SERVER


def feed_forward_length(info: Any) -> int:
    value = (getattr(info, "metadata", None) or {}).get(f"{info.architecture}.feed_forward_length")
    if isinstance(value, (int, float)) and value > 0:
        return int(value)
    for tensor in getattr(info, "tensors", None) or ():
        if tensor.name == "blk.0.ffn_up.weight" and len(tensor.shape) >= 2:
            return int(max(tensor.shape[:2]))
    return 4 * int(info.embedding_length)


def micro_batch(config: LaunchConfig, ctx: int) -> int:
    return max(1, min(int(config.ubatch), int(config.batch), int(ctx)))


def compute_buffer_bytes(info: Any, config: LaunchConfig, cells: int) -> int:
    """Worst-case compute buffer of one device that evaluates layers (full-offload size)."""
    ub = micro_batch(config, cells)
    n_head = max(info.head_count) if isinstance(info.head_count, (list, tuple)) else int(info.head_count)
    flash = flash_attention_on(config)
    attention = 0 if flash else 4 * ub * cells * n_head
    mask = (2 if flash else 4) * ub * cells  # the KQ mask: one f32 (f16 with flash attention) per cell and token
    logits = 4 * ub * int(info.vocab_size)
    feed_forward = 2 * 4 * ub * feed_forward_length(info)
    residual = RESIDUAL_ACTIVATIONS * 4 * ub * int(info.embedding_length)
    return max(attention, logits, feed_forward) + residual + mask


def host_side_buffer_bytes(info: Any, config: LaunchConfig) -> int:
    """CPU buffer when every layer runs on the GPU: input embeddings of a micro-batch + one logits row."""
    ub = micro_batch(config, config.ctx)
    return 4 * ub * int(info.embedding_length) * 2 + 4 * int(info.vocab_size) * max(1, int(config.parallel))


def baseline_rss_bytes(config: LaunchConfig) -> int:
    return BACKEND_BASELINE_RSS.get(config.backend, BACKEND_BASELINE_RSS["embedded"])


def keeps_all_logits(config: LaunchConfig) -> bool:
    """llama-cpp-python's server keeps every evaluated token's logits (a ctx x n_vocab float32 array) when
    logits_all is on. The launcher passes `--logits_all false`; only a user's extra_args can turn it back on
    (measured: it costs 113 MiB after a 525-token prompt with a 20k vocabulary)."""
    if config.backend == BACKEND_LLAMA_SERVER:
        return False
    args = [a.lower() for a in config.extra_args]
    settings = [args[i + 1] for i, a in enumerate(args) if a == "--logits_all" and i + 1 < len(args)]
    return bool(settings) and settings[-1] in ("true", "1")


def all_logits_bytes(info: Any, config: LaunchConfig, cells: int) -> int:
    """RAM for keeping every token's logits: the Python array (ctx rows) + llama.cpp's output buffer (n_batch rows)."""
    if not keeps_all_logits(config):
        return 0
    return 4 * int(info.vocab_size) * (int(cells) + int(config.batch))
