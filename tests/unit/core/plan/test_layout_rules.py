"""Which layers hold what, per architecture, the way llama.cpp b11434's loader decides it.

Sources (llama.cpp src/): models/<arch>.cpp load_arch_hparams (window, default pattern period), llama-hparams.cpp
set_swa_pattern / n_embd_r / n_embd_s / has_kv, llama-model.cpp create_memory (which layers each cache keeps),
llama-kv-cache.cpp (K only for MLA; V padded to the widest layer without flash attention).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from app.core.plan.cells import Cells, cache_layer_bytes
from app.core.plan.layout import cache_layout, recurrent_state, swa_pattern


@dataclass
class Info:
    architecture: str
    block_count: int
    head_count_kv: list[int]
    key_length: int | None = 128
    value_length: int | None = 128
    embedding_length: int = 1024
    metadata: dict[str, Any] = field(default_factory=dict)
    arrays: dict[str, Any] = field(default_factory=dict)


def info(arch: str, n_layer: int = 8, heads_kv: int | list[int] = 8, arrays: dict | None = None,
         key_length: int | None = 128, value_length: int | None = 128, embedding_length: int = 1024,
         **keys) -> Info:
    """keys: GGUF keys after "{arch}." with "__" for "." (attention__sliding_window = attention.sliding_window)."""
    heads = heads_kv if isinstance(heads_kv, list) else [heads_kv] * n_layer
    return Info(arch, n_layer, heads, key_length, value_length, embedding_length,
                metadata={f"{arch}.{k.replace('__', '.')}": v for k, v in keys.items()},
                arrays={f"{arch}.{k}": v for k, v in (arrays or {}).items()})


T, F = True, False


@pytest.mark.parametrize("model, window, pattern", [
    (info("gemma2"), 4096, [T, F] * 4),  # no key: gemma 2's default window, every other layer
    (info("gemma2", attention__sliding_window=2048), 2048, [T, F] * 4),
    (info("gemma3", n_layer=12, attention__sliding_window=1024), 1024, [T, T, T, T, T, F] * 2),
    (info("gemma3"), 0, [F] * 8),  # gemma3 without a window key: no sliding window (gemma3 1B text-only configs)
    (info("gemma3", n_layer=6, attention__sliding_window=512, attention__sliding_window_pattern=3), 512,
     [T, T, F] * 2),  # the pattern key as a period
    (info("cohere2", attention__sliding_window=4096), 4096, [T, T, T, F] * 2),
    (info("cohere2moe", attention__sliding_window=4096), 4096, [F, T, T, T] * 2),  # dense first
    (info("gpt-oss", attention__sliding_window=128), 128, [T, F] * 4),
    (info("llama4"), 8192, [T, T, T, F] * 2),  # chunked attention, 8192-token chunks
    (info("llama4", attention__sliding_window=0), 0, [F] * 8),
    (info("phi3", attention__sliding_window=2047), 0, [F] * 8),  # llama.cpp turns Phi SWA off
    (info("llama", attention__sliding_window=4096), 0, [F] * 8),  # an arch without SWA support ignores the key
    (info("gemma4", n_layer=4, attention__sliding_window=512, arrays={"attention.sliding_window_pattern":
                                                                      [T, T, T, F]}), 512, [T, T, T, F]),
    (info("gemma4", n_layer=4, attention__sliding_window=512), 0, [F] * 4),  # gemma4 needs the array
])
def test_sliding_window_layers_per_architecture(model, window, pattern):
    assert swa_pattern(model, model.block_count) == (window, pattern)


def test_hybrid_recurrent_layers_and_their_kv():
    qwen3next = cache_layout(info("qwen3next", heads_kv=2, ssm__conv_kernel=4, ssm__inner_size=4096,
                                  ssm__state_size=128, ssm__group_count=16))
    assert qwen3next.recurrent == (T, T, T, F) * 2  # full_attention_interval 4 by default
    assert [il for il in range(8) if qwen3next.k_elems[il]] == [3, 7]
    jamba = cache_layout(info("jamba", heads_kv=[0, 0, 0, 0, 8, 0, 0, 0], ssm__conv_kernel=4,
                              ssm__inner_size=8192, ssm__state_size=16))
    assert jamba.recurrent == (T, T, T, T, F, T, T, T) and jamba.kv_layers(swa=False) == [4]
    nemotron = cache_layout(info("nemotron_h", n_layer=4, heads_kv=[0, 0, 8, 0],
                                 feed_forward_length=[0, 1024, 0, 1024]))
    assert nemotron.recurrent == (T, F, F, F) and nemotron.kv_layers(swa=False) == [2]  # 1 and 3: MLP only
    falcon = cache_layout(info("falcon-h1", n_layer=2, ssm__conv_kernel=4, ssm__inner_size=2048,
                               ssm__state_size=128))
    assert falcon.recurrent == (T, T) and falcon.kv_layers(swa=False) == [0, 1]  # attention and SSM in each


@pytest.mark.parametrize("model, r, s", [
    (info("mamba", ssm__conv_kernel=4, ssm__inner_size=1536, ssm__state_size=16), 3 * 1536, 16 * 1536),
    (info("mamba2", ssm__conv_kernel=4, ssm__inner_size=512, ssm__state_size=64, ssm__group_count=1),
     3 * (512 + 2 * 64), 64 * 512),
    (info("rwkv6", wkv__head_size=64), 2 * 1024, 1024 * 64),  # token shift count defaults to 2
    (info("rwkv7", wkv__head_size=64, token_shift_count=1), 1024, 1024 * 64),
    (info("lfm2", shortconv__l_cache=3), 1024 * 2, 0),
])
def test_recurrent_state_per_sequence(model, r, s):
    assert recurrent_state(model) == (r, s)


def test_recurrent_state_is_f32_rows_per_sequence():
    layout = cache_layout(info("mamba2", n_layer=2, heads_kv=0, embedding_length=256, ssm__conv_kernel=4,
                               ssm__inner_size=512, ssm__state_size=64, ssm__group_count=1))
    # 4 sequences x (1920 + 32768) f32 per layer: llama_memory_recurrent printed 1.06 MiB for the two layers
    assert cache_layer_bytes(layout, Cells(4096, 4096, 1, 4, 512)) == [4 * 4 * (1920 + 32768)] * 2


def test_mla_keeps_k_only_and_v_is_read_out_of_it():
    keys = dict(attention__key_length_mla=192, attention__value_length_mla=128, attention__kv_lora_rank=512,
                rope__dimension_count=64)
    layout = cache_layout(info("deepseek2", n_layer=2, heads_kv=1, key_length=576, value_length=512, **keys))
    assert layout.mla and layout.k_elems == (576, 576) and layout.v_elems == (0, 0)
    assert cache_layer_bytes(layout, Cells(8192, 8192, 1, 1, 512), "q8_0", "q8_0") == [8192 * 576 * 34 // 32] * 2
    no_lengths = cache_layout(info("deepseek2", n_layer=1, heads_kv=1, key_length=None, value_length=None, **keys))
    assert no_lengths.k_elems == (576,)  # kv_lora_rank + rope dims
    legacy = cache_layout(info("deepseek2", n_layer=1, heads_kv=128, key_length=192, value_length=128))
    assert not legacy.mla and legacy.k_elems == (128 * 192,) and legacy.v_elems == (128 * 128,)


def test_shared_kv_layers_mtp_layers_and_swa_head_sizes():
    gemma4 = cache_layout(info("gemma4", n_layer=6, heads_kv=1, key_length=512, value_length=512,
                               attention__sliding_window=512, attention__key_length_swa=256,
                               attention__value_length_swa=256, attention__shared_kv_layers=2,
                               arrays={"attention.sliding_window_pattern": [T, T, F, T, T, F]}))
    assert gemma4.k_elems == (256, 256, 512, 256, 0, 0)  # the last 2 layers reuse earlier layers' KV
    cells = Cells(4096, 1024, 1, 1, 512)
    with_fa = cache_layer_bytes(gemma4, cells, flash_attn=True)
    without = cache_layer_bytes(gemma4, cells, flash_attn=False)
    assert with_fa[0] == 1024 * (256 + 256) * 2 and without[0] == 1024 * (256 + 512) * 2  # V padded to 512
    gemma3n = cache_layout(info("gemma3n", n_layer=30, heads_kv=2, attention__sliding_window=512))
    assert [il for il in range(30) if gemma3n.k_elems[il]] == list(range(20))
    nextn = cache_layout(info("glm4moe", n_layer=4, nextn_predict_layers=1))
    assert nextn.n_layer == 3  # the MTP layer has no KV in the main context
