"""Shared pieces of every generated model: the spec, random tensors, common metadata, the vocabulary."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from app.core.synthetic.vocab import Vocab

# llama.cpp's K-quants (Q4_K, Q5_K, Q6_K) pack rows in blocks of 256 values; a row that is not a multiple of 256
# falls back to a 32-block type (llama-quant.cpp tensor_type_fallback), so Q4_K_M would not test K-quant kernels.
# Every matrix row (ne[0] in ggml's order: n_embd, n_ff, the attention width) is a multiple of this by default.
K_QUANT_BLOCK = 256


@dataclass(frozen=True)
class SyntheticSpec:
    """Sizes of a generated model. Defaults: tiny (a few MB) yet every row a multiple of 256 for K-quants.

    Fields an architecture does not use are ignored (experts outside MoE, the window outside gemma3).
    ``head_dim`` None means n_embd / n_head.
    """

    n_layers: int = 2
    n_embd: int = 256
    n_head: int = 4
    n_head_kv: int = 2
    head_dim: int | None = None
    n_ff: int = 512
    n_expert: int = 4
    n_expert_used: int = 2
    n_ff_exp: int = 256
    sliding_window: int = 128
    ctx_train: int = 4096
    f16: bool = True
    seed: int = 0
    name: str | None = None  # general.name; None: "tiny-random-<arch>"

    def with_changes(self, **changes: Any) -> SyntheticSpec:
        return replace(self, **changes)

    @property
    def n_embd_head(self) -> int:
        return self.head_dim or self.n_embd // self.n_head


class ModelWriter:
    """A GGUFWriter plus a seeded generator; tensor shapes are given in ggml's order (ne0 first), like llama.cpp."""

    def __init__(self, path: str | os.PathLike[str], arch: str, spec: SyntheticSpec):
        import gguf  # imported here: only generation needs it, never the reader

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.arch = arch
        self.spec = spec
        self.rng = np.random.default_rng(spec.seed)
        self.dtype = np.float16 if spec.f16 else np.float32
        self.gguf = gguf.GGUFWriter(str(self.path), arch)

    # -- metadata ----------------------------------------------------------------------------------------------
    def key(self, suffix: str) -> str:
        return f"{self.arch}.{suffix}"

    def common(self, *, n_ff: int | None = None, rms_eps: float = 1e-6, rope_freq_base: float = 10000.0,
               head_dim_keys: bool = False, rope_dims: int | None = None) -> None:
        """Keys every decoder here carries; ``head_dim_keys`` writes attention.key_length/value_length."""
        s, w = self.spec, self.gguf
        w.add_name(s.name or f"tiny-random-{self.arch}")
        w.add_context_length(s.ctx_train)
        w.add_embedding_length(s.n_embd)
        w.add_block_count(s.n_layers)
        w.add_feed_forward_length(s.n_ff if n_ff is None else n_ff)
        w.add_head_count(s.n_head)
        w.add_head_count_kv(s.n_head_kv)
        w.add_layer_norm_rms_eps(rms_eps)
        w.add_rope_freq_base(rope_freq_base)
        if head_dim_keys:
            w.add_key_length(s.n_embd_head)
            w.add_value_length(s.n_embd_head)
        if rope_dims is not None:
            w.add_rope_dimension_count(rope_dims)
        w.add_file_type(1 if s.f16 else 0)  # llama_ftype: ALL_F32 = 0, MOSTLY_F16 = 1

    def vocab(self, vocab: Vocab, chat_template: str) -> None:
        w = self.gguf
        w.add_tokenizer_model(vocab.model)
        if vocab.pre:
            w.add_tokenizer_pre(vocab.pre)
        w.add_token_list(vocab.tokens)
        if vocab.scores is not None:
            w.add_token_scores(vocab.scores)
        w.add_token_types(vocab.types)
        if vocab.merges:
            w.add_token_merges(vocab.merges)
        adders = {"bos": w.add_bos_token_id, "eos": w.add_eos_token_id, "eot": w.add_eot_token_id,
                  "unk": w.add_unk_token_id, "pad": w.add_pad_token_id}
        for role, token_id in vocab.special.items():
            adders[role](token_id)
        w.add_add_bos_token(vocab.add_bos)
        if vocab.add_space_prefix is not None:
            w.add_add_space_prefix(vocab.add_space_prefix)
        w.add_chat_template(chat_template)

    # -- tensors -----------------------------------------------------------------------------------------------
    def matrix(self, name: str, *ne: int, scale: float = 0.02, f32: bool = False,
               zero_rows: Sequence[int] = ()) -> None:
        """A random weight with ggml shape ``ne`` (row length first); stored F16 or F32 per the spec
        (``f32``: always F32, for tensors converters keep F32 such as a MoE router). ``zero_rows``: rows
        (ne[1] indices) set to zero."""
        data = (self.rng.standard_normal(tuple(reversed(ne))) * scale).astype(np.float32 if f32 else self.dtype)
        if zero_rows:
            data[..., list(zero_rows), :] = 0
        self.gguf.add_tensor(name, data)

    def vector(self, name: str, n: int, value: float | None = None) -> None:
        """A 1-D tensor (norm weight, bias), always F32 as llama.cpp's converters store them."""
        data = np.full(n, value, dtype=np.float32) if value is not None else \
            (self.rng.standard_normal(n) * 0.02).astype(np.float32)
        self.gguf.add_tensor(name, data)

    def finish(self) -> Path:
        w = self.gguf
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        return self.path
