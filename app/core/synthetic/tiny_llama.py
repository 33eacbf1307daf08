"""Generate tiny random-weight llama GGUF models locally.

Used by the tests and benchmarks, which need real files that llama.cpp really loads in milliseconds
(the demo model in the window is the real SmolLM2, see app.core.demo).
Nothing here is ever downloaded.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

_SPECIAL = ["<unk>", "<s>", "</s>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}</s>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


@dataclass(frozen=True)
class TinyModelSpec:
    n_layers: int = 2
    n_embd: int = 64
    n_head: int = 4
    n_head_kv: int = 4
    n_ff: int = 128
    ctx_train: int = 4096
    n_extra_tokens: int = 0  # grows the vocabulary beyond the 259 byte/special tokens
    f16: bool = False
    seed: int = 0
    name: str = "tiny-random-llama"
    chat_template: bool = True  # False: a base model, which continues text instead of answering


def _vocab(spec: TinyModelSpec) -> tuple[list[bytes], list[float], list[int]]:
    tokens = [t.encode() for t in _SPECIAL] + [f"<0x{b:02X}>".encode() for b in range(256)]
    tokens += [f"tok{i}".encode() for i in range(spec.n_extra_tokens)]
    scores = [0.0] * len(tokens)
    # gguf token types: 1 normal, 2 unknown, 3 control, 6 byte
    types = [2, 3, 3] + [6] * 256 + [1] * spec.n_extra_tokens
    return tokens, scores, types


def write_tiny_llama(path: str | os.PathLike[str], spec: TinyModelSpec | None = None) -> Path:
    """Write a loadable llama-architecture GGUF with random weights and return its path."""
    import gguf  # imported here: only generation needs it, never the reader

    spec = spec or TinyModelSpec()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tokens, scores, types = _vocab(spec)
    writer = gguf.GGUFWriter(str(path), "llama")
    _add_metadata(writer, spec)
    _add_vocab(writer, tokens, scores, types, chat_template=spec.chat_template)
    _add_tensors(writer, spec, n_vocab=len(tokens))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def _add_metadata(writer, spec: TinyModelSpec) -> None:
    writer.add_name(spec.name)
    writer.add_context_length(spec.ctx_train)
    writer.add_embedding_length(spec.n_embd)
    writer.add_block_count(spec.n_layers)
    writer.add_feed_forward_length(spec.n_ff)
    writer.add_head_count(spec.n_head)
    writer.add_head_count_kv(spec.n_head_kv)
    writer.add_rope_dimension_count(spec.n_embd // spec.n_head)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(1 if spec.f16 else 0)


def _add_vocab(writer, tokens: list[bytes], scores: list[float], types: list[int], *, chat_template: bool) -> None:
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    if chat_template:
        writer.add_chat_template(CHAT_TEMPLATE)


def _add_tensors(writer, spec: TinyModelSpec, n_vocab: int) -> None:
    rng = np.random.default_rng(spec.seed)
    wtype = np.float16 if spec.f16 else np.float32
    kv_dim = spec.n_embd // spec.n_head * spec.n_head_kv

    def weight(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.02).astype(wtype)

    def norm(n: int) -> np.ndarray:
        return np.ones(n, dtype=np.float32)

    writer.add_tensor("token_embd.weight", weight(n_vocab, spec.n_embd))
    for i in range(spec.n_layers):
        p = f"blk.{i}."
        writer.add_tensor(p + "attn_norm.weight", norm(spec.n_embd))
        writer.add_tensor(p + "attn_q.weight", weight(spec.n_embd, spec.n_embd))
        writer.add_tensor(p + "attn_k.weight", weight(kv_dim, spec.n_embd))
        writer.add_tensor(p + "attn_v.weight", weight(kv_dim, spec.n_embd))
        writer.add_tensor(p + "attn_output.weight", weight(spec.n_embd, spec.n_embd))
        writer.add_tensor(p + "ffn_norm.weight", norm(spec.n_embd))
        writer.add_tensor(p + "ffn_gate.weight", weight(spec.n_ff, spec.n_embd))
        writer.add_tensor(p + "ffn_up.weight", weight(spec.n_ff, spec.n_embd))
        writer.add_tensor(p + "ffn_down.weight", weight(spec.n_embd, spec.n_ff))
    writer.add_tensor("output_norm.weight", norm(spec.n_embd))
    writer.add_tensor("output.weight", weight(n_vocab, spec.n_embd))
