"""One writer per architecture, with tensor names and shapes as llama.cpp's loader expects them.

Shapes are in ggml's order (row length first), as in llama.cpp's ``src/models/<arch>.cpp`` ``load_arch_tensors``.
Tokenizers and chat templates follow the real model families: ChatML over a byte-level BPE vocabulary for
qwen2/qwen3moe, gemma's turn markers over SentencePiece, phi-3's role markers over SentencePiece with the chat
tokens appended after the base vocabulary.
"""

from __future__ import annotations

import os
from pathlib import Path

from app.core.synthetic.vocab import CONTROL, UNKNOWN, Vocab, bpe_vocab, spm_vocab
from app.core.synthetic.writer import ModelWriter, SyntheticSpec

LLAMA_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}</s>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
CHATML_TEMPLATE = (  # Qwen2-Instruct's template: ChatML with a default system prompt
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
GEMMA_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% if message['role'] == 'assistant' %}{% set role = 'model' %}"
    "{% else %}{% set role = message['role'] %}{% endif %}"
    "{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<start_of_turn>model\n' }}{% endif %}"
)
PHI3_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'system' %}{{ '<|system|>\n' + message['content'] + '<|end|>\n' }}"
    "{% elif message['role'] == 'user' %}{{ '<|user|>\n' + message['content'] + '<|end|>\n' }}"
    "{% elif message['role'] == 'assistant' %}{{ '<|assistant|>\n' + message['content'] + '<|end|>\n' }}{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}"
)

_SPM_BASE = [("<unk>", UNKNOWN), ("<s>", CONTROL), ("</s>", CONTROL)]


def llama_vocab() -> Vocab:
    return spm_vocab(_SPM_BASE, special={"bos": "<s>", "eos": "</s>", "unk": "<unk>"})


def qwen_vocab(*, thinking: bool = False) -> Vocab:
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] + (["<think>", "</think>"] if thinking else [])
    return bpe_vocab(specials, special={"bos": "<|endoftext|>", "eos": "<|im_end|>", "pad": "<|endoftext|>"})


def gemma_vocab() -> Vocab:
    leading = [("<pad>", CONTROL), ("<eos>", CONTROL), ("<bos>", CONTROL), ("<unk>", UNKNOWN),
               ("<start_of_turn>", CONTROL), ("<end_of_turn>", CONTROL)]
    return spm_vocab(leading, special={"bos": "<bos>", "eos": "<eos>", "eot": "<end_of_turn>", "unk": "<unk>",
                                       "pad": "<pad>"}, add_space_prefix=False)


def phi3_vocab() -> Vocab:
    trailing = [(t, CONTROL) for t in ("<|endoftext|>", "<|assistant|>", "<|end|>", "<|user|>", "<|system|>")]
    return spm_vocab(_SPM_BASE, trailing, special={"bos": "<s>", "eos": "<|endoftext|>", "eot": "<|end|>",
                                                   "unk": "<unk>", "pad": "<|endoftext|>"}, add_bos=False)


def _embeddings(m: ModelWriter, vocab: Vocab, *, tied: bool) -> None:
    """Token embeddings and output head. The rows of lone bytes 0x80-0xFF are zero (logit 0, below the random
    tokens' best), so a greedy decode never repeats a UTF-8 lead byte forever: llama-cpp-python does not count
    tokens towards max_tokens while the text ends in an incomplete UTF-8 sequence and would fill the context."""
    quiet = vocab.partial_utf8_ids()
    m.matrix("token_embd.weight", m.spec.n_embd, len(vocab), zero_rows=quiet)
    m.vector("output_norm.weight", m.spec.n_embd, 1.0)
    if not tied:
        m.matrix("output.weight", m.spec.n_embd, len(vocab), zero_rows=quiet)


def _attention(m: ModelWriter, p: str, *, bias: bool = False) -> None:
    s = m.spec
    q, kv = s.n_head * s.n_embd_head, s.n_head_kv * s.n_embd_head
    m.matrix(p + "attn_q.weight", s.n_embd, q)
    m.matrix(p + "attn_k.weight", s.n_embd, kv)
    m.matrix(p + "attn_v.weight", s.n_embd, kv)
    if bias:
        m.vector(p + "attn_q.bias", q)
        m.vector(p + "attn_k.bias", kv)
        m.vector(p + "attn_v.bias", kv)
    m.matrix(p + "attn_output.weight", q, s.n_embd)


def _gated_ffn(m: ModelWriter, p: str) -> None:
    s = m.spec
    m.matrix(p + "ffn_gate.weight", s.n_embd, s.n_ff)
    m.matrix(p + "ffn_up.weight", s.n_embd, s.n_ff)
    m.matrix(p + "ffn_down.weight", s.n_ff, s.n_embd)


def write_llama(path: str | os.PathLike[str], spec: SyntheticSpec | None = None) -> Path:
    """Plain llama (separate q/k/v, SwiGLU), sized for K-quants unlike the demo model's 64-wide rows."""
    spec = spec or SyntheticSpec()
    m, vocab = ModelWriter(path, "llama", spec), llama_vocab()
    m.common(rms_eps=1e-5, rope_dims=spec.n_embd_head)
    m.vocab(vocab, LLAMA_TEMPLATE)
    _embeddings(m, vocab, tied=False)
    for i in range(spec.n_layers):
        p = f"blk.{i}."
        m.vector(p + "attn_norm.weight", spec.n_embd, 1.0)
        _attention(m, p)
        m.vector(p + "ffn_norm.weight", spec.n_embd, 1.0)
        _gated_ffn(m, p)
    return m.finish()


def write_qwen2(path: str | os.PathLike[str], spec: SyntheticSpec | None = None) -> Path:
    """Qwen2: q/k/v with biases, tied embeddings (no output.weight, as in Qwen2-0.5B), byte-level BPE."""
    spec = spec or SyntheticSpec()
    m, vocab = ModelWriter(path, "qwen2", spec), qwen_vocab()
    m.common(rope_freq_base=1_000_000.0)
    m.vocab(vocab, CHATML_TEMPLATE)
    _embeddings(m, vocab, tied=True)
    for i in range(spec.n_layers):
        p = f"blk.{i}."
        m.vector(p + "attn_norm.weight", spec.n_embd, 1.0)
        _attention(m, p, bias=True)
        m.vector(p + "ffn_norm.weight", spec.n_embd, 1.0)
        _gated_ffn(m, p)
    return m.finish()


QWEN3MOE_SPEC = SyntheticSpec(n_head=8, n_head_kv=2, head_dim=64)  # attention 512 wide on a 256-wide model


def write_qwen3moe(path: str | os.PathLike[str], spec: SyntheticSpec | None = None) -> Path:
    """Qwen3-MoE: router (ffn_gate_inp, kept F32 like the converter does) and stacked experts (ffn_*_exps),
    per-head q/k RMS norms, attention width n_head * key_length different from n_embd."""
    spec = spec or QWEN3MOE_SPEC
    m, vocab = ModelWriter(path, "qwen3moe", spec), qwen_vocab(thinking=True)
    m.common(rope_freq_base=1_000_000.0, head_dim_keys=True)
    m.gguf.add_expert_count(spec.n_expert)
    m.gguf.add_expert_used_count(spec.n_expert_used)
    m.gguf.add_expert_feed_forward_length(spec.n_ff_exp)
    m.vocab(vocab, CHATML_TEMPLATE)
    _embeddings(m, vocab, tied=False)
    for i in range(spec.n_layers):
        p = f"blk.{i}."
        m.vector(p + "attn_norm.weight", spec.n_embd, 1.0)
        _attention(m, p)
        m.vector(p + "attn_q_norm.weight", spec.n_embd_head, 1.0)
        m.vector(p + "attn_k_norm.weight", spec.n_embd_head, 1.0)
        m.vector(p + "ffn_norm.weight", spec.n_embd, 1.0)
        m.matrix(p + "ffn_gate_inp.weight", spec.n_embd, spec.n_expert, f32=True)
        m.matrix(p + "ffn_gate_exps.weight", spec.n_embd, spec.n_ff_exp, spec.n_expert)
        m.matrix(p + "ffn_up_exps.weight", spec.n_embd, spec.n_ff_exp, spec.n_expert)
        m.matrix(p + "ffn_down_exps.weight", spec.n_ff_exp, spec.n_embd, spec.n_expert)
    return m.finish()


GEMMA3_SPEC = SyntheticSpec(n_layers=3, n_head=4, n_head_kv=1, n_ff=512)
GEMMA3_GLOBAL_EVERY = 3  # every third layer attends to the whole context, the others to a sliding window


def write_gemma3(path: str | os.PathLike[str], spec: SyntheticSpec | None = None) -> Path:
    """Gemma 3: sliding-window layers (attention.sliding_window, a per-layer pattern, its own rope base),
    q/k norms, post-attention and post-FFN norms, tied embeddings, gemma's turn-marker template."""
    spec = spec or GEMMA3_SPEC
    m, vocab = ModelWriter(path, "gemma3", spec), gemma_vocab()
    m.common(rope_freq_base=1_000_000.0, head_dim_keys=True)
    m.gguf.add_sliding_window(spec.sliding_window)
    m.gguf.add_array(m.key("attention.sliding_window_pattern"),
                     [(i + 1) % GEMMA3_GLOBAL_EVERY != 0 for i in range(spec.n_layers)])  # True = sliding window
    m.gguf.add_float32(m.key("rope.freq_base_swa"), 10000.0)
    m.vocab(vocab, GEMMA_TEMPLATE)
    _embeddings(m, vocab, tied=True)
    for i in range(spec.n_layers):
        p = f"blk.{i}."
        m.vector(p + "attn_norm.weight", spec.n_embd, 1.0)
        _attention(m, p)
        m.vector(p + "attn_q_norm.weight", spec.n_embd_head, 1.0)
        m.vector(p + "attn_k_norm.weight", spec.n_embd_head, 1.0)
        m.vector(p + "post_attention_norm.weight", spec.n_embd, 1.0)
        m.vector(p + "ffn_norm.weight", spec.n_embd, 1.0)
        _gated_ffn(m, p)
        m.vector(p + "post_ffw_norm.weight", spec.n_embd, 1.0)
    return m.finish()


PHI3_SPEC = SyntheticSpec(n_head=4, n_head_kv=4)


def write_phi3(path: str | os.PathLike[str], spec: SyntheticSpec | None = None) -> Path:
    """Phi-3: one fused attn_qkv (q, k, v rows stacked) and one fused ffn_up holding gate and up (2 * n_ff rows),
    no ffn_gate; SentencePiece vocabulary with phi-3's chat tokens after the base vocabulary."""
    spec = spec or PHI3_SPEC
    m, vocab = ModelWriter(path, "phi3", spec), phi3_vocab()
    m.common(rms_eps=1e-5, rope_dims=spec.n_embd_head)
    m.vocab(vocab, PHI3_TEMPLATE)
    _embeddings(m, vocab, tied=False)
    q, kv = spec.n_head * spec.n_embd_head, spec.n_head_kv * spec.n_embd_head
    for i in range(spec.n_layers):
        p = f"blk.{i}."
        m.vector(p + "attn_norm.weight", spec.n_embd, 1.0)
        m.matrix(p + "attn_qkv.weight", spec.n_embd, q + 2 * kv)
        m.matrix(p + "attn_output.weight", q, spec.n_embd)
        m.vector(p + "ffn_norm.weight", spec.n_embd, 1.0)
        m.matrix(p + "ffn_up.weight", spec.n_embd, 2 * spec.n_ff)
        m.matrix(p + "ffn_down.weight", spec.n_ff, spec.n_embd)
    return m.finish()
