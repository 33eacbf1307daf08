"""Compute buffers and fixed overheads: the parts of a load that are not weights or KV cache.

llama.cpp reserves its compute buffer at context creation (sched_reserve) for a worst-case micro-batch of
n_ubatch tokens over the whole KV cache. The allocator reuses memory between graph nodes, so the buffer is
the KQ masks (inputs, live all along) plus the largest set of tensors alive at one point of a layer:
  masks: n_ubatch × cells per stream, f16 with flash attention, f32 without; one per cache (full and SWA);
  attention: without flash attention the scores, 4 × n_ubatch × cells × n_head, + Q, K, V and the residual;
  feed-forward: gate, up and their product (3 × n_ff, n_ff_exp × experts used for MoE) + the residual stream;
  output (once the masks are freed): logits of the tokens that need them. llama-server reserves
    n_outputs = its slots (n_outputs_max = n_parallel, llama-context.cpp graph_reserve), so a 262k
    vocabulary costs 4 × slots × n_vocab, not 4 × n_ubatch × n_vocab; llama-cpp-python leaves
    n_outputs_max at 0 = n_batch, i.e. every token of the micro-batch.
Fitted on llama-server b11434's CPU buffers (tests/data/plan/*.log): 5 × n_embd of residual activations.
A partial offload computes on both sides and copies between them; other tools measured its GPU buffer at
1.2-2.7× a full offload (gguf-parser-go #45), so we use 1.5× on the GPU then.
"""

from __future__ import annotations

from typing import Any

from app.core.launch.config import BACKEND_LLAMA_SERVER, LaunchConfig
from app.core.plan.cells import Cells
from app.core.plan.kv import cache_type_bytes
from app.core.plan.layout import PURE_RECURRENT, CacheLayout

MiB = 1024 * 1024

# VRAM a CUDA context takes before any tensor (Ollama measured 457 MiB; gguf-parser uses 250 MiB)
GPU_CONTEXT_BYTES = 457 * MiB
# host RAM the CUDA runtime and driver add to the server process when a GPU is used (estimate)
GPU_HOST_OVERHEAD_BYTES = 300 * MiB
# resident memory of the server process itself with a tiny model, measured on Linux x86-64 (llama-server b11434,
# tiny 2-layer model, after one request; llama-cpp-python 0.3.36's server, loaded and idle, less weights and KV
# cache: 83.3 MiB with a 259-token vocabulary, and 83.3 MiB with SmolLM2's once its vocabulary terms are taken off)
BACKEND_BASELINE_RSS = {
    BACKEND_LLAMA_SERVER: 22 * MiB,
    "embedded": 84 * MiB,
}
PARTIAL_OFFLOAD_FACTOR = 1.5
RESIDUAL_ACTIVATIONS = 5  # live n_ubatch × n_embd f32 tensors besides the largest intermediate


def flash_attention_on(config: LaunchConfig) -> bool:
    """What the backend does when flash attention is left at its default: both engines run with llama.cpp's
    "auto" (llama-server's -fa default; the built-in engine through app/core/launch/embedded_server.py), which
    turns it on wherever the device running the layer supports it, always on the CPU."""
    if config.flash_attn is not None:
        return bool(config.flash_attn)
    return True


def _layer_values(info: Any, suffix: str) -> list[int]:
    value = (getattr(info, "metadata", None) or {}).get(f"{info.architecture}.{suffix}")
    if value is None:
        value = (getattr(info, "arrays", None) or {}).get(f"{info.architecture}.{suffix}")
    if isinstance(value, (list, tuple)):
        return [int(v) for v in value if isinstance(v, (int, float))]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [int(value)]
    return []


def feed_forward_length(info: Any) -> int:
    """Widest FFN intermediate of one token: the dense n_ff, or the experts a token runs (used + shared)."""
    dense = max(_layer_values(info, "feed_forward_length"), default=0)
    if not dense:
        for tensor in getattr(info, "tensors", None) or ():
            if tensor.name == "blk.0.ffn_up.weight" and len(tensor.shape) >= 2:
                dense = int(max(tensor.shape[:2]))
    n_ff_exp = max(_layer_values(info, "expert_feed_forward_length"), default=0)
    used = max(_layer_values(info, "expert_used_count"), default=0)
    shared = max(_layer_values(info, "expert_shared_count"), default=0)
    experts = n_ff_exp * (used + shared)
    if dense or experts:
        return max(dense, experts)
    return 0 if getattr(info, "architecture", None) in PURE_RECURRENT else 4 * int(info.embedding_length)


def output_rows(config: LaunchConfig, cells: Cells) -> int:
    """Tokens whose logits the reserved graph computes (n_outputs of the worst-case micro-batch)."""
    if config.backend == BACKEND_LLAMA_SERVER:
        return min(cells.ubatch, max(cells.n_seq, 1))
    return cells.ubatch


def _recurrent_phase(info: Any, layout: CacheLayout, ub: int, n_seq: int) -> int:
    """Mamba-style layer: in-projection (z, x, B, C, dt), the conv window, the scan output and every sequence's
    new states (fitted on mamba2: 8.41 MiB with 1 slot, 8.80 MiB with 4 as llama.cpp printed)."""
    if not any(layout.recurrent):
        return 0
    md = getattr(info, "metadata", None) or {}
    arch = info.architecture

    def key(suffix: str) -> int:
        value = md.get(f"{arch}.{suffix}")
        return int(value) if isinstance(value, (int, float)) else 0

    d_inner, d_state, n_group = key("ssm.inner_size"), key("ssm.state_size"), key("ssm.group_count")
    n_embd = int(info.embedding_length)
    d_inner = d_inner or 2 * n_embd
    conv_dim = d_inner + 2 * n_group * d_state
    in_proj = 2 * d_inner + 2 * n_group * d_state + key("ssm.time_step_rank")
    states = 4 * max(n_seq, 1) * (layout.state_r + layout.state_s)
    return 4 * ub * (2 * in_proj + conv_dim + d_inner + 3 * n_embd) + states


def _mla_extra(info: Any, layout: CacheLayout, cells: Cells, ub: int, flash: bool, bytes_k: float) -> int:
    """MLA attends in the compressed space: every head's query is absorbed into kv_lora_rank values and the
    output comes back from it, and without flash attention V (the first kv_lora_rank values of each K row) is
    copied transposed: cells × kv_lora_rank. Fitted on two generated deepseek2 models as llama-server printed
    them (4 heads, kv_lora_rank 512, n_embd 256 and 8 heads, 256, 512: +1.4 % / +1.9 %, without flash +0.3 %)."""
    if not layout.mla:
        return 0
    md = getattr(info, "metadata", None) or {}
    kv_lora = int(md.get(f"{info.architecture}.attention.kv_lora_rank") or info.value_length or 0)
    heads = info.head_count if isinstance(info.head_count, (list, tuple)) else [info.head_count]
    n_head = max((int(h) for h in heads), default=0)
    extra = 4 * ub * (n_head * kv_lora + 3 * int(info.embedding_length))
    if not flash:
        extra += int(cells.full * cells.streams * kv_lora * bytes_k)
    return extra


def compute_buffer_bytes(info: Any, config: LaunchConfig, layout: CacheLayout, cells: Cells,
                         output: int | None = None) -> int:
    """Worst-case compute buffer of one device that evaluates layers (full-offload size), as llama.cpp reserves it;
    ``output``: the rows of logits to size it for (default: the reserved graph's, output_rows)."""
    ub = cells.ubatch
    flash = flash_attention_on(config)
    n_embd = int(info.embedding_length)
    full_layers, swa_layers = layout.kv_layers(swa=False), layout.kv_layers(swa=True)
    mask_bytes = 2 if flash else 4
    masks = mask_bytes * ub * ((cells.full if full_layers else 0) + (cells.swa if swa_layers else 0))
    attention = 0
    if full_layers or swa_layers:
        heads = info.head_count if isinstance(info.head_count, (list, tuple)) else [info.head_count]
        n_head = max((int(h) for h in heads), default=0)
        widest_cache = cells.full if full_layers else cells.swa
        scores = 0 if flash else 4 * ub * widest_cache * n_head
        q_width = n_head * int(info.key_length or 0)
        kv_width = max(layout.k_elems) + max(layout.v_elems)
        attention = scores + 4 * ub * (RESIDUAL_ACTIVATIONS * n_embd + q_width + kv_width)
        attention += _mla_extra(info, layout, cells, ub, flash, float(cache_type_bytes(config.cache_type_k)))
    feed_forward = 4 * ub * (3 * feed_forward_length(info) + RESIDUAL_ACTIVATIONS * n_embd)
    layers = masks + max(attention, feed_forward, _recurrent_phase(info, layout, ub, cells.n_seq))
    # after the last layer the masks are freed: the output layer needs the logits and the last hidden states
    # (llama-cpp-python, SmolLM2 -c 4096: 96 MiB of logits + 3.4 MiB = the 99.38 MiB it printed)
    rows = output_rows(config, cells) if output is None else output
    logits = 4 * (rows * int(info.vocab_size) + 3 * ub * n_embd)
    return max(layers, logits)


def computed_output_rows(config: LaunchConfig, cells: Cells) -> int:
    """Rows of logits a running engine computes per micro-batch: llama-server one per slot; llama-cpp-python
    only the last token's (every token's with logits_all), though it reserves the graph for the whole batch."""
    if config.backend == BACKEND_LLAMA_SERVER or keeps_all_logits(config):
        return output_rows(config, cells)
    return 1


def cpu_work_bytes(info: Any, config: LaunchConfig, layout: CacheLayout, cells: Cells) -> int:
    """The CPU backend's work buffer (ggml-cpu.c ggml_graph_plan, allocated apart from the compute buffer at the
    first evaluation): a matrix multiplication converts its f32 input to the weight's dot-product type there.
    Without flash attention the largest is V × softmax(KQ): the scores, n_head × n_ubatch × cells, converted to
    the V cache's type (f16: 2 bytes; an f32 cache needs no conversion). Measured with llama-cpp-python,
    SmolLM2-135M at -c 2048 and a 32-layer model with 2 heads at -c 11008: 51 and 69 MiB resident beyond the load
    after a prompt of 80 % of the context, against 43 + 16 and 52 + 17 MiB of scores and work buffer (the
    scores at the cells then in use)."""
    if flash_attention_on(config) or not (layout.kv_layers(swa=False) or layout.kv_layers(swa=True)):
        return 0
    v_bytes = 0 if config.cache_type_v == "f32" else 2
    heads = info.head_count if isinstance(info.head_count, (list, tuple)) else [info.head_count]
    widest_cache = cells.full if layout.kv_layers(swa=False) else cells.swa
    return v_bytes * cells.ubatch * widest_cache * max((int(h) for h in heads), default=0)


def resident_compute_bytes(info: Any, config: LaunchConfig, layout: CacheLayout, cells: Cells) -> int:
    """What the CPU's compute holds in RAM when the context is full: the part of the reserved buffer the graphs
    really touch (pages never written are never resident) and the work buffer."""
    used = compute_buffer_bytes(info, config, layout, cells, computed_output_rows(config, cells))
    return used + cpu_work_bytes(info, config, layout, cells)


def host_side_buffer_bytes(info: Any, cells: Cells) -> int:
    """CPU compute buffer when every layer runs on the GPU: the input embeddings of a micro-batch."""
    return 4 * cells.ubatch * int(info.embedding_length) * 2


def output_buffer_bytes(info: Any, cells: Cells) -> int:
    """llama_context's host output buffer ("CPU output buffer size"): n_vocab floats for each sequence's last
    token (output_reserve(n_seq_max); n_outputs_max_per_seq = 1). 0.75 MiB for SmolLM2 with 4 slots."""
    return 4 * int(info.vocab_size) * max(cells.n_seq, 1)


# The vocabulary's and the request's bookkeeping in the server process, fitted on peak RSS after a prompt of 85 %
# of the context (benchmarks/bench_plan.py, llama-server b11434, CPU): SmolLM2 (49,152 tokens, 48,900 BPE merges)
# stays ~15.8 MiB above the plan at 2k and 8k alone; Gemma 3 270M (262,144 tokens, no merges): 456 MiB peak vs
# 420 MiB breakdown.
VOCAB_TOKEN_BYTES = 64  # id_to_token, token_to_id, the token-to-piece cache
VOCAB_MERGE_BYTES = 256  # a BPE rank map entry: two strings, an int, the tree node
# What long prompts leave resident, per context token. llama-server: an HTTP thread tokenizes a request's text
# (the chat's replies and its token counts alike) and copies the tokens into the task and the slot; the freed pages
# stay in that thread's malloc arena, and each of its HTTP threads (slots + 4 or more) keeps its own. Measured in
# /proc/PID/smaps beside the KV cache and compute mapping (b11434, 2 cores, generated qwen3moe at 8192 tokens): one
# text prompt up to the full context, heap and arenas +0.55 KiB a token; seven of them, +1.0 KiB (56.3 MiB peak, then
# steady), which the plan needs to stay within 5 % (0.96 KiB). The built-in engine: ~50 bytes.
CONTEXT_TOKEN_BYTES = {BACKEND_LLAMA_SERVER: 1024, "embedded": 56}


def baseline_rss_bytes(config: LaunchConfig, info: Any = None, ctx: int = 0) -> int:
    """Resident memory of the server process besides weights, caches and buffers."""
    base = BACKEND_BASELINE_RSS.get(config.backend, BACKEND_BASELINE_RSS["embedded"])
    if info is None:
        return base
    merges = int((getattr(info, "array_lengths", None) or {}).get("tokenizer.ggml.merges", 0) or 0)
    return (base + VOCAB_TOKEN_BYTES * int(info.vocab_size or 0) + VOCAB_MERGE_BYTES * merges
            + context_token_bytes(config) * max(int(ctx), 0))


def context_token_bytes(config: LaunchConfig) -> int:
    """Resident bytes per context token that a long prompt leaves in the server process (CONTEXT_TOKEN_BYTES)."""
    return CONTEXT_TOKEN_BYTES.get(config.backend, CONTEXT_TOKEN_BYTES["embedded"])


def prompt_cache_bytes(config: LaunchConfig) -> int:
    """llama-server's prompt cache in RAM, at its cap (``cache_ram_mib``; 0, the app's default, is off): it fills
    over a long run with the KV of earlier prompts, so a plan for hours of chat counts all of it."""
    if config.backend != BACKEND_LLAMA_SERVER:
        return 0
    return max(int(config.cache_ram_mib), 0) * MiB


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
