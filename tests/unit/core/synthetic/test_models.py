"""Generated models of several architectures (app.core.synthetic): what llama.cpp's loader and tokenizers need,
read back with the app's own reader. Loading them in the real engines is
tests/integration/models/test_arch_matrix.py."""

from __future__ import annotations

import hashlib

import gguf
import pytest

from app.core.gguf.reader import read_model_info
from app.core.gguf.validate import validate
from app.core.problem import Status
from app.core.synthetic import ARCHITECTURES, K_QUANT_BLOCK, SyntheticSpec, write_model
from app.core.synthetic.archs import gemma_vocab, llama_vocab, phi3_vocab, qwen_vocab
from app.core.synthetic.vocab import BYTE, CONTROL, gpt2_byte_chars

ARCHS = sorted(ARCHITECTURES)

# what llama.cpp's loader (src/models/<arch>.cpp) requires beyond the llama basics, by tensor-name suffix
REQUIRED = {
    "qwen2": {"blk.0.attn_q.bias", "blk.0.attn_k.bias", "blk.0.attn_v.bias"},
    "qwen3moe": {"blk.0.ffn_gate_inp.weight", "blk.0.ffn_gate_exps.weight", "blk.0.ffn_up_exps.weight",
                 "blk.0.ffn_down_exps.weight", "blk.0.attn_q_norm.weight", "blk.0.attn_k_norm.weight"},
    "gemma3": {"blk.0.post_attention_norm.weight", "blk.0.post_ffw_norm.weight", "blk.0.attn_q_norm.weight",
               "blk.0.attn_k_norm.weight"},
    "phi3": {"blk.0.attn_qkv.weight", "blk.0.ffn_up.weight"},
    "llama": {"blk.0.attn_q.weight", "blk.0.ffn_gate.weight", "output.weight"},
    "deepseek2": {"blk.0.attn_q_a.weight", "blk.0.attn_q_b.weight", "blk.0.attn_kv_a_mqa.weight",
                  "blk.0.attn_kv_a_norm.weight", "blk.0.attn_k_b.weight", "blk.0.attn_v_b.weight",
                  "blk.0.ffn_gate.weight", "blk.1.ffn_gate_exps.weight", "blk.1.ffn_gate_shexp.weight",
                  "blk.1.exp_probs_b.bias", "output.weight"},
    "mamba2": {"blk.0.ssm_in.weight", "blk.0.ssm_conv1d.weight", "blk.0.ssm_conv1d.bias", "blk.0.ssm_dt.bias",
               "blk.0.ssm_a", "blk.0.ssm_d", "blk.0.ssm_norm.weight", "blk.0.ssm_out.weight"},
    "granitehybrid": {"blk.0.ssm_in.weight", "blk.0.ssm_a", "blk.1.attn_q.weight", "blk.1.attn_k.weight",
                      "blk.2.ssm_out.weight", "blk.0.ffn_gate.weight", "blk.1.ffn_down.weight"},
}
ABSENT = {
    "qwen2": {"output.weight"},  # tied embeddings
    "gemma3": {"output.weight"},
    "phi3": {"blk.0.ffn_gate.weight", "blk.0.attn_q.weight"},  # fused
    "qwen3moe": {"blk.0.ffn_gate.weight"},
    "deepseek2": {"blk.0.attn_q.weight", "blk.0.attn_kv_b.weight", "blk.0.ffn_gate_exps.weight",
                  "blk.1.ffn_gate.weight"},  # MLA split k_b/v_b; layer 0 dense, layer 1 experts
    "mamba2": {"output.weight", "blk.0.attn_q.weight", "blk.0.ffn_up.weight"},
    "granitehybrid": {"output.weight", "blk.0.attn_q.weight", "blk.1.ssm_in.weight"},  # one kind of mixer a layer
}
# 2-D tensors llama.cpp never quantizes (llama-quant.cpp): the MoE router, Mamba's conv1d, names without ".weight"
UNQUANTIZED = ("ffn_gate_inp.weight", "ssm_conv1d.weight", ".ssm_a", ".ssm_d")


@pytest.mark.parametrize("arch", ARCHS)
def test_every_architecture_reads_back_and_passes_the_checks(tmp_path, arch):
    path = write_model(arch, tmp_path / f"{arch}.gguf")
    report = validate(path)
    assert not report.has_errors and report.status is Status.OK, [c.to_dict("en") for c in report.checks]
    info = report.info
    assert info.architecture == arch and info.has_chat_template and info.file_type == 1  # MOSTLY_F16
    names = {t.name for t in info.tensors}
    assert REQUIRED[arch] <= names and not (ABSENT.get(arch, set()) & names)
    assert path.stat().st_size < 8 * 1024**2
    # K-quants need every row (ggml's ne[0]) of a quantizable matrix to be a multiple of 256
    for tensor in info.tensors:
        if len(tensor.shape) >= 2 and not tensor.name.endswith(UNQUANTIZED):
            assert tensor.shape[0] % K_QUANT_BLOCK == 0, (tensor.name, tensor.shape)


def test_shapes_follow_llama_cpp_loader(tmp_path):
    moe = {t.name: t for t in read_model_info(write_model("qwen3moe", tmp_path / "m.gguf")).tensors}
    assert moe["blk.0.ffn_gate_exps.weight"].shape == (256, 256, 4)  # {n_embd, n_ff_exp, n_expert}
    assert moe["blk.0.ffn_down_exps.weight"].shape == (256, 256, 4)
    assert moe["blk.0.ffn_gate_inp.weight"].shape == (256, 4) and moe["blk.0.ffn_gate_inp.weight"].type_id == 0
    assert moe["blk.0.attn_q.weight"].shape == (256, 512)  # 8 heads x key_length 64, wider than n_embd
    assert moe["blk.0.attn_output.weight"].shape == (512, 256)
    phi = {t.name: t for t in read_model_info(write_model("phi3", tmp_path / "p.gguf")).tensors}
    assert phi["blk.0.attn_qkv.weight"].shape == (256, 256 * 3)  # q + k + v rows, 4 kv heads
    assert phi["blk.0.ffn_up.weight"].shape == (256, 2 * 512)  # gate and up fused
    gemma = read_model_info(write_model("gemma3", tmp_path / "g.gguf"))
    md = gemma.metadata
    assert md["gemma3.attention.sliding_window"] == 128
    assert gemma.array_lengths["gemma3.attention.sliding_window_pattern"] == 3
    field = gguf.GGUFReader(tmp_path / "g.gguf").fields["gemma3.attention.sliding_window_pattern"]
    assert [bool(field.parts[i][0]) for i in field.data] == [True, True, False]  # the last layer is global
    assert gemma.key_length == 64 and gemma.head_count_kv == [1, 1, 1]
    moe_md = read_model_info(tmp_path / "m.gguf").metadata
    assert (moe_md["qwen3moe.expert_count"], moe_md["qwen3moe.expert_used_count"]) == (4, 2)
    assert moe_md["qwen3moe.expert_feed_forward_length"] == 256


def test_mla_and_ssm_shapes_follow_llama_cpp_loader(tmp_path):
    info = read_model_info(write_model("deepseek2", tmp_path / "d.gguf"))
    ds, md = {t.name: t for t in info.tensors}, info.metadata
    # the converter's MLA keys: one KV head of kv_lora_rank + rope dims, the decompressed sizes in *_mla
    assert (md["deepseek2.attention.kv_lora_rank"], md["deepseek2.rope.dimension_count"]) == (512, 32)
    assert (md["deepseek2.attention.key_length"], md["deepseek2.attention.value_length"]) == (544, 512)
    assert (md["deepseek2.attention.key_length_mla"], md["deepseek2.attention.value_length_mla"]) == (288, 64)
    assert md["deepseek2.attention.head_count_kv"] == 1 and md["deepseek2.leading_dense_block_count"] == 1
    assert md["deepseek2.expert_shared_count"] == 1 and md["deepseek2.expert_gating_func"] == 2
    assert ds["blk.0.attn_kv_a_mqa.weight"].shape == (256, 512 + 32)  # {n_embd, kv_lora_rank + rope}
    assert ds["blk.0.attn_k_b.weight"].shape == (256, 512, 4)  # {qk_nope, kv_lora_rank, n_head}
    assert ds["blk.0.attn_v_b.weight"].shape == (512, 64, 4)  # {kv_lora_rank, v_head, n_head}
    assert ds["blk.0.attn_q_b.weight"].shape == (256, 4 * 288) and ds["blk.0.attn_output.weight"].shape == (256, 256)
    assert ds["blk.1.ffn_gate_shexp.weight"].shape == (256, 256)
    mamba = read_model_info(write_model("mamba2", tmp_path / "m.gguf"))
    mt, mm = {t.name: t for t in mamba.tensors}, mamba.metadata
    assert (mm["mamba2.ssm.inner_size"], mm["mamba2.ssm.state_size"], mm["mamba2.ssm.time_step_rank"]) == (512, 64, 8)
    assert mt["blk.0.ssm_in.weight"].shape == (256, 2 * 512 + 2 * 64 + 8)  # z, x, B, C, dt
    assert mt["blk.0.ssm_conv1d.weight"].shape == (4, 512 + 2 * 64) and mt["blk.0.ssm_conv1d.weight"].type_id == 0
    assert mt["blk.0.ssm_a"].shape == (1, 8) and mt["blk.0.ssm_norm.weight"].shape == (512, 1)
    hybrid = read_model_info(write_model("granitehybrid", tmp_path / "h.gguf"))
    assert hybrid.head_count_kv == [0, 2, 0]  # 0 marks the recurrent layers
    assert hybrid.metadata["granitehybrid.rope.scaling.finetuned"] is False
    assert hybrid.metadata["granitehybrid.ssm.inner_size"] == 2 * 256  # llama.cpp asserts d_inner == 2 * n_embd


def test_same_spec_same_bytes_and_spec_changes_apply(tmp_path):
    a = write_model("qwen2", tmp_path / "a.gguf")
    b = write_model("qwen2", tmp_path / "b.gguf")
    assert hashlib.sha256(a.read_bytes()).digest() == hashlib.sha256(b.read_bytes()).digest()
    c = write_model("qwen2", tmp_path / "c.gguf", SyntheticSpec(n_layers=4, f16=False, seed=1, name="four"))
    info = read_model_info(c)
    assert info.block_count == 4 and info.file_type == 0 and info.name == "four"
    with pytest.raises(ValueError, match="no generator"):
        write_model("mamba", tmp_path / "x.gguf")


def test_bpe_vocab_is_what_llama_cpp_needs():
    vocab = qwen_vocab(thinking=True)
    assert vocab.model == "gpt2" and vocab.pre == "qwen2" and not vocab.add_bos
    assert len(set(vocab.tokens)) == len(vocab.tokens)  # llama.cpp asserts unique token texts
    assert vocab.tokens[:256] == gpt2_byte_chars() and len(set(gpt2_byte_chars())) == 256
    assert vocab.merges, "llama.cpp refuses a BPE vocabulary without merges"
    tokens = set(vocab.tokens)
    for merge in vocab.merges:
        left, right = merge.split(" ")
        assert left in tokens and right in tokens and left + right in tokens
    assert "ĠParis" in tokens or "Paris" in tokens  # merges really learnt words
    assert vocab.tokens[vocab.special["eos"]] == "<|im_end|>"
    assert all(vocab.types[vocab.id(t)] == CONTROL for t in ("<|im_start|>", "<|im_end|>", "<think>"))


@pytest.mark.parametrize("make", [llama_vocab, gemma_vocab, phi3_vocab])
def test_sentencepiece_vocabs_have_byte_fallback_and_pieces(make):
    vocab = make()
    assert vocab.model == "llama" and vocab.scores is not None and len(vocab.scores) == len(vocab.tokens)
    assert len(set(vocab.tokens)) == len(vocab.tokens)
    assert vocab.types[vocab.id("<0x0A>")] == BYTE  # llama.cpp's newline token for SPM
    assert sum(1 for t in vocab.types if t == BYTE) == 256
    assert "\u2581the" in vocab.tokens
    for role in ("bos", "eos", "unk"):
        assert 0 <= vocab.special[role] < len(vocab)


def test_chat_markers_are_control_tokens():
    gemma, phi = gemma_vocab(), phi3_vocab()
    assert gemma.tokens[gemma.special["eot"]] == "<end_of_turn>" and gemma.add_space_prefix is False
    assert phi.tokens[phi.special["eot"]] == "<|end|>" and phi.tokens.index("<|user|>") > 256
    assert all(phi.types[phi.id(t)] == CONTROL for t in ("<|user|>", "<|assistant|>", "<|end|>"))
