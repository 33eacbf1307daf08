"""One writer per architecture, with tensor names and shapes as llama.cpp's loader expects them.

Shapes are in ggml's order (row length first), as in llama.cpp's ``src/models/<arch>.cpp`` ``load_arch_tensors``.
Tokenizers and chat templates follow the real model families: ChatML over a byte-level BPE vocabulary for
qwen2/qwen3moe, gemma's turn markers over SentencePiece, phi-3's role markers over SentencePiece with the chat
tokens appended after the base vocabulary.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

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


def _embeddings(m: ModelWriter, vocab: Vocab, *, tied: bool, quiet_eos: bool = False) -> None:
    """Token embeddings and output head. The rows of lone bytes 0x80-0xFF are zero (logit 0, below the random
    tokens' best), so a greedy decode never repeats a UTF-8 lead byte forever: llama-cpp-python does not count
    tokens towards max_tokens while the text ends in an incomplete UTF-8 sequence and would fill the context.
    ``quiet_eos``: the end-of-sequence row too, so a greedy decode runs to max_tokens (the built-in engine has no
    ignore_eos)."""
    quiet = vocab.partial_utf8_ids() + ([vocab.special["eos"]] if quiet_eos else [])
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


DEEPSEEK_TEMPLATE = (  # DeepSeek-V3's markers, without its tool-call branches
    "{{ bos_token }}{% for message in messages %}"
    "{% if message['role'] == 'system' %}{{ message['content'] }}"
    "{% elif message['role'] == 'user' %}{{ '<｜User｜>' + message['content'] }}"
    "{% elif message['role'] == 'assistant' %}{{ '<｜Assistant｜>' + message['content'] + '<｜end▁of▁sentence｜>' }}"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<｜Assistant｜>' }}{% endif %}"
)
NEOX_TEMPLATE = (  # Mamba-2 is a base model without a template; a plain role-prefixed one so chat works
    "{% for message in messages %}{{ message['role'] + ': ' + message['content'] + '\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ 'assistant: ' }}{% endif %}"
)


def deepseek_vocab() -> Vocab:
    specials = ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>"]
    return bpe_vocab(specials, special={"bos": "<｜begin▁of▁sentence｜>", "eos": "<｜end▁of▁sentence｜>",
                                        "pad": "<｜end▁of▁sentence｜>"}, pre="deepseek-v3", add_bos=True)


def neox_vocab() -> Vocab:
    return bpe_vocab(["<|endoftext|>"], special={"bos": "<|endoftext|>", "eos": "<|endoftext|>"}, pre="gpt-2")


@dataclass(frozen=True)
class MlaShape:
    """DeepSeek-V2/V3 multi-head latent attention sizes (the real V3: q 1536, kv 512, nope 128, rope 64, v 128)."""

    q_lora_rank: int = 256  # 0: a plain attn_q instead of attn_q_a/attn_q_b
    kv_lora_rank: int = 512
    qk_nope: int = 256  # attn_k_b's rows: 256 so Q4_K_M really makes it a K-quant (the real 128 falls back)
    qk_rope: int = 32
    v_head: int = 64
    n_expert_shared: int = 1
    n_dense_lead: int = 1  # leading layers with a dense FFN (first_k_dense_replace)


DEEPSEEK2_SPEC = SyntheticSpec(n_layers=2, n_head=4, n_head_kv=1)
DEEPSEEK2_MLA = MlaShape()


def write_deepseek2(path: str | os.PathLike[str], spec: SyntheticSpec | None = None,
                    mla: MlaShape = DEEPSEEK2_MLA) -> Path:
    """DeepSeek-V3 layout (llama.cpp arch deepseek2) as today's converter writes it: MLA stored as MQA with one KV
    head of key_length kv_lora_rank + rope dims and value_length kv_lora_rank, the decompressed head sizes in
    key_length_mla/value_length_mla, attn_kv_b split into attn_k_b/attn_v_b; leading dense layers, then routed
    experts with a sigmoid router and its bias (exp_probs_b) plus shared experts (ffn_*_shexp)."""
    spec = spec or DEEPSEEK2_SPEC
    m, vocab = ModelWriter(path, "deepseek2", spec), deepseek_vocab()
    w = m.gguf
    m.common(rope_freq_base=10000.0, rope_dims=mla.qk_rope)
    w.add_leading_dense_block_count(mla.n_dense_lead)
    w.add_vocab_size(len(vocab))
    if mla.q_lora_rank:
        w.add_q_lora_rank(mla.q_lora_rank)
    w.add_kv_lora_rank(mla.kv_lora_rank)
    w.add_key_length(mla.kv_lora_rank + mla.qk_rope)
    w.add_value_length(mla.kv_lora_rank)
    w.add_key_length_mla(mla.qk_nope + mla.qk_rope)
    w.add_value_length_mla(mla.v_head)
    w.add_expert_feed_forward_length(spec.n_ff_exp)
    w.add_expert_count(spec.n_expert)
    w.add_expert_used_count(spec.n_expert_used)
    w.add_expert_shared_count(mla.n_expert_shared)
    w.add_expert_weights_scale(2.5)
    w.add_expert_weights_norm(True)
    w.add_uint32(m.key("expert_gating_func"), 2)  # LLAMA_EXPERT_GATING_FUNC_TYPE_SIGMOID, as V3
    m.vocab(vocab, DEEPSEEK_TEMPLATE)
    _embeddings(m, vocab, tied=False, quiet_eos=True)
    n_head, q_head = spec.n_head, mla.qk_nope + mla.qk_rope
    shared = spec.n_ff_exp * mla.n_expert_shared
    for i in range(spec.n_layers):
        p = f"blk.{i}."
        m.vector(p + "attn_norm.weight", spec.n_embd, 1.0)
        if mla.q_lora_rank:
            m.matrix(p + "attn_q_a.weight", spec.n_embd, mla.q_lora_rank)
            m.vector(p + "attn_q_a_norm.weight", mla.q_lora_rank, 1.0)
            m.matrix(p + "attn_q_b.weight", mla.q_lora_rank, n_head * q_head)
        else:
            m.matrix(p + "attn_q.weight", spec.n_embd, n_head * q_head)
        m.matrix(p + "attn_kv_a_mqa.weight", spec.n_embd, mla.kv_lora_rank + mla.qk_rope)
        m.vector(p + "attn_kv_a_norm.weight", mla.kv_lora_rank, 1.0)
        m.matrix(p + "attn_k_b.weight", mla.qk_nope, mla.kv_lora_rank, n_head)
        m.matrix(p + "attn_v_b.weight", mla.kv_lora_rank, mla.v_head, n_head)
        m.matrix(p + "attn_output.weight", n_head * mla.v_head, spec.n_embd)
        m.vector(p + "ffn_norm.weight", spec.n_embd, 1.0)
        if i < mla.n_dense_lead:
            _gated_ffn(m, p)
            continue
        m.matrix(p + "ffn_gate_inp.weight", spec.n_embd, spec.n_expert, f32=True)
        m.vector(p + "exp_probs_b.bias", spec.n_expert, 0.0)
        m.matrix(p + "ffn_gate_exps.weight", spec.n_embd, spec.n_ff_exp, spec.n_expert)
        m.matrix(p + "ffn_up_exps.weight", spec.n_embd, spec.n_ff_exp, spec.n_expert)
        m.matrix(p + "ffn_down_exps.weight", spec.n_ff_exp, spec.n_embd, spec.n_expert)
        m.matrix(p + "ffn_gate_shexp.weight", spec.n_embd, shared)
        m.matrix(p + "ffn_up_shexp.weight", spec.n_embd, shared)
        m.matrix(p + "ffn_down_shexp.weight", shared, spec.n_embd)
    return m.finish()


@dataclass(frozen=True)
class SsmShape:
    """Mamba-2 state sizes (the real 130M: d_inner 1536, d_state 128, head_dim 64, 1 group, d_conv 4)."""

    d_inner: int = 512
    d_state: int = 64
    head_dim: int = 64
    n_group: int = 1
    d_conv: int = 4

    @property
    def n_ssm_head(self) -> int:  # ssm.time_step_rank
        return self.d_inner // self.head_dim


MAMBA2_SPEC = SyntheticSpec(n_layers=2)
MAMBA2_SSM = SsmShape()


def _ssm_keys(m: ModelWriter, ssm: SsmShape) -> None:
    w = m.gguf
    w.add_ssm_conv_kernel(ssm.d_conv)
    w.add_ssm_inner_size(ssm.d_inner)
    w.add_ssm_state_size(ssm.d_state)
    w.add_ssm_time_step_rank(ssm.n_ssm_head)
    w.add_ssm_group_count(ssm.n_group)


def _recurrent_keys(m: ModelWriter, ssm: SsmShape, *, n_ff: int, n_head: int, n_head_kv: list[int] | None) -> None:
    """The keys a Mamba-2 or hybrid model has where common() does not fit (head counts of 0, no rope)."""
    s, w = m.spec, m.gguf
    w.add_name(s.name or f"tiny-random-{m.arch}")
    w.add_context_length(s.ctx_train)
    w.add_embedding_length(s.n_embd)
    w.add_block_count(s.n_layers)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    if n_head_kv is not None:
        w.add_head_count_kv(n_head_kv)
    w.add_layer_norm_rms_eps(1e-5)
    _ssm_keys(m, ssm)
    w.add_file_type(1 if s.f16 else 0)


def _mamba2_mixer(m: ModelWriter, p: str, ssm: SsmShape) -> None:
    """One Mamba-2 mixer: ssm_in to z, x, B, C and dt; the conv over x, B and C (F32: llama.cpp never quantizes
    ssm_conv1d); A = -exp(A_log) and D as {1, n_head}; a grouped RMS norm; ssm_out."""
    w, n_embd = m.gguf, m.spec.n_embd
    conv_dim = ssm.d_inner + 2 * ssm.n_group * ssm.d_state
    n_head = ssm.n_ssm_head
    m.matrix(p + "ssm_in.weight", n_embd, ssm.d_inner + conv_dim + n_head)
    m.matrix(p + "ssm_conv1d.weight", ssm.d_conv, conv_dim, scale=0.2, f32=True)
    m.vector(p + "ssm_conv1d.bias", conv_dim)
    m.vector(p + "ssm_dt.bias", n_head)
    w.add_tensor(p + "ssm_a", -np.exp(m.rng.uniform(0.0, 2.0, (n_head, 1))).astype(np.float32))
    w.add_tensor(p + "ssm_d", np.ones((n_head, 1), dtype=np.float32))
    w.add_tensor(p + "ssm_norm.weight", np.ones((ssm.n_group, ssm.d_inner // ssm.n_group), dtype=np.float32))
    m.matrix(p + "ssm_out.weight", ssm.d_inner, n_embd)


def write_mamba2(path: str | os.PathLike[str], spec: SyntheticSpec | None = None, ssm: SsmShape = MAMBA2_SSM) -> Path:
    """Mamba-2 (recurrent, no attention): the converter's keys (head_count and feed_forward_length 0), one mixer
    per layer, tied embeddings (as mamba2-130m)."""
    spec = spec or MAMBA2_SPEC
    m, vocab = ModelWriter(path, "mamba2", spec), neox_vocab()
    _recurrent_keys(m, ssm, n_ff=0, n_head=0, n_head_kv=None)
    m.vocab(vocab, NEOX_TEMPLATE)
    _embeddings(m, vocab, tied=True, quiet_eos=True)
    for i in range(spec.n_layers):
        p = f"blk.{i}."
        m.vector(p + "attn_norm.weight", spec.n_embd, 1.0)
        _mamba2_mixer(m, p, ssm)
    return m.finish()


GRANITE_TEMPLATE = (
    "{% for message in messages %}{{ '<|start_of_role|>' + message['role'] + '<|end_of_role|>' + message['content']"
    " + '<|end_of_text|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_of_role|>assistant"
    "<|end_of_role|>' }}{% endif %}"
)
GRANITEHYBRID_SPEC = SyntheticSpec(n_layers=3)
GRANITEHYBRID_ATTENTION = (1,)  # layers with attention; the others are Mamba-2 (head_count_kv 0 there)


def granite_vocab() -> Vocab:
    specials = ["<|end_of_text|>", "<|start_of_role|>", "<|end_of_role|>"]
    return bpe_vocab(specials, special={"bos": "<|end_of_text|>", "eos": "<|end_of_text|>",
                                        "pad": "<|end_of_text|>"}, pre="gpt-2")


def write_granitehybrid(path: str | os.PathLike[str], spec: SyntheticSpec | None = None,
                        ssm: SsmShape = MAMBA2_SSM, attention: tuple[int, ...] = GRANITEHYBRID_ATTENTION) -> Path:
    """Granite 4.0-H (hybrid): Mamba-2 mixers in most layers, GQA attention in ``attention`` (head_count_kv per
    layer, 0 marks a recurrent layer), no RoPE (rope.scaling.finetuned false, as the converter writes for
    hybrids), d_inner = 2 * n_embd (llama.cpp asserts it), a dense SwiGLU FFN after every mixer."""
    spec = spec or GRANITEHYBRID_SPEC
    m, vocab = ModelWriter(path, "granitehybrid", spec), granite_vocab()
    _recurrent_keys(m, ssm, n_ff=spec.n_ff, n_head=spec.n_head,
                    n_head_kv=[spec.n_head_kv if i in attention else 0 for i in range(spec.n_layers)])
    m.gguf.add_rope_freq_base(10000.0)
    m.gguf.add_rope_scaling_finetuned(False)
    m.vocab(vocab, GRANITE_TEMPLATE)
    _embeddings(m, vocab, tied=True, quiet_eos=True)
    for i in range(spec.n_layers):
        p = f"blk.{i}."
        m.vector(p + "attn_norm.weight", spec.n_embd, 1.0)
        if i in attention:
            _attention(m, p)
        else:
            _mamba2_mixer(m, p, ssm)
        m.vector(p + "ffn_norm.weight", spec.n_embd, 1.0)
        _gated_ffn(m, p)
    return m.finish()
