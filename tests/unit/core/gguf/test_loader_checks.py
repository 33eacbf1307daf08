"""The doctor's loader checks, one by one, on hand-made minimal files (no llama.cpp needed).

Each file is a tiny llama-architecture GGUF written with gguf-py (2 layers of 8 values, 6 tokens) with one
thing changed: a key left out or of another type, a tensor missing, renamed or of another shape, a
tokenizer list too short, two tokens with the same text. The agreement with llama.cpp's real loader is
measured by tests/integration/gguf/test_doctor_loader_agreement.py.
"""

from __future__ import annotations

import struct
from pathlib import Path

import gguf
import numpy as np
import pytest

from app.core.gguf.reader import read_model_info
from app.core.gguf.validate import validate
from app.core.problem import Status

VT = gguf.GGUFValueType
TOKENS = ["<unk>", "<s>", "</s>", "<0x0A>", "a", "b"]
NEW_CHECKS = ("loader_metadata", "tokenizer", "tensor_names", "layers", "tensor_shapes")


def _kv(arch: str, layers: int, embd: int, heads: int, ff: int) -> dict:
    return {
        f"{arch}.context_length": (512, VT.UINT32),
        f"{arch}.embedding_length": (embd, VT.UINT32),
        f"{arch}.block_count": (layers, VT.UINT32),
        f"{arch}.feed_forward_length": (ff, VT.UINT32),
        f"{arch}.attention.head_count": (heads, VT.UINT32),
        f"{arch}.attention.head_count_kv": (heads, VT.UINT32),
        f"{arch}.attention.layer_norm_rms_epsilon": (1e-5, VT.FLOAT32),
        "general.name": ("mini", VT.STRING),
        "tokenizer.ggml.model": ("llama", VT.STRING),
        "tokenizer.ggml.tokens": (list(TOKENS), VT.ARRAY, VT.STRING),
        "tokenizer.ggml.scores": ([0.0] * len(TOKENS), VT.ARRAY, VT.FLOAT32),
        "tokenizer.ggml.token_type": ([2, 3, 3, 6, 1, 1], VT.ARRAY, VT.INT32),
    }


def _tensors(layers: int, embd: int, ff: int, vocab: int) -> dict[str, tuple[int, ...]]:
    """name -> numpy shape (rows first, as gguf-py takes them)."""
    shapes = {"token_embd.weight": (vocab, embd)}
    for i in range(layers):
        p = f"blk.{i}."
        shapes |= {p + "attn_norm.weight": (embd,), p + "attn_q.weight": (embd, embd),
                   p + "attn_k.weight": (embd, embd), p + "attn_v.weight": (embd, embd),
                   p + "attn_output.weight": (embd, embd), p + "ffn_norm.weight": (embd,),
                   p + "ffn_gate.weight": (ff, embd), p + "ffn_up.weight": (ff, embd),
                   p + "ffn_down.weight": (embd, ff)}
    shapes |= {"output_norm.weight": (embd,), "output.weight": (vocab, embd)}
    return shapes


def mini(path: Path, *, arch: str = "llama", layers: int = 2, embd: int = 8, heads: int = 2, ff: int = 16,
         kv: dict | None = None, drop_keys=(), tensors: dict | None = None, drop_tensors=(), big_endian=False,
         split_max_tensors: int = 0) -> Path:
    """A minimal GGUF: ``kv`` adds or replaces keys ((value, type[, item type])), ``drop_keys`` removes them,
    ``tensors`` adds or replaces tensor shapes, ``drop_tensors`` removes tensors. With ``split_max_tensors``
    gguf-py writes parts named ``<stem>-0000N-of-0000M.gguf`` next to ``path`` instead."""
    keys = _kv(arch, layers, embd, heads, ff) | (kv or {})
    for key in drop_keys:
        keys.pop(key, None)
    vocab = len(keys["tokenizer.ggml.tokens"][0]) if "tokenizer.ggml.tokens" in keys else len(TOKENS)
    shapes = _tensors(layers, embd, ff, vocab) | (tensors or {})
    endian = gguf.GGUFEndian.BIG if big_endian else gguf.GGUFEndian.LITTLE
    writer = gguf.GGUFWriter(str(path), arch, endianess=endian, split_max_tensors=split_max_tensors)
    if "general.architecture" in drop_keys:
        del writer.kv_data[0]["general.architecture"]
    for key, value in keys.items():
        writer.add_key_value(key, value[0], value[1], value[2] if len(value) > 2 else None)
    for name, shape in shapes.items():
        if name not in drop_tensors:
            writer.add_tensor(name, np.zeros(shape, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def rows(path: Path) -> dict:
    report = validate(path)
    return {c.id: c for c in report.checks if c.id in NEW_CHECKS or c.id == "truncation"}


def error(path: Path, check_id: str):
    check = rows(path)[check_id]
    assert check.status is Status.ERROR, (check_id, check.message.render("en"))
    assert check.message.render("zh") and check.next_step is not None and check.evidence
    return check


def text(check) -> str:
    return check.message.render("en")


# --- a good file ------------------------------------------------------------------------------------------


def test_a_complete_minimal_model_passes_every_loader_check(tmp_path):
    found = rows(mini(tmp_path / "ok.gguf"))
    assert {k: v.status for k, v in found.items()} == {k: Status.OK for k in (*NEW_CHECKS, "truncation")}
    assert "6 tokens" in text(found["tokenizer"]) and "All 2 layers" in text(found["layers"])


def test_tied_output_is_allowed(tmp_path):
    found = rows(mini(tmp_path / "tied.gguf", drop_tensors=("output.weight",)))
    assert all(c.status is Status.OK for c in found.values())


def test_internal_fields_stay_out_of_the_json(tmp_path):
    info = read_model_info(mini(tmp_path / "m.gguf"))
    assert info.value_types["llama.block_count"] == 4 and info.array_types["tokenizer.ggml.tokens"] == 8
    data = info.to_dict()
    assert not {"value_types", "array_types", "array_offsets", "arrays", "shard_tensors"} & set(data)
    assert data["tensor_count"] == len(info.tensors)


# --- loader_metadata -------------------------------------------------------------------------------------


def test_missing_required_key_is_named_in_plain_words(tmp_path):
    check = error(mini(tmp_path / "m.gguf", drop_keys=("llama.block_count",)), "loader_metadata")
    assert "number of layers" in text(check) and "层数" in check.message.render("zh")
    assert check.evidence == ("missing key llama.block_count",)


def test_missing_norm_epsilon_is_llama_specific(tmp_path):
    check = error(mini(tmp_path / "m.gguf", drop_keys=("llama.attention.layer_norm_rms_epsilon",)), "loader_metadata")
    assert "normalisation epsilon" in text(check)


def test_key_of_the_wrong_type(tmp_path):
    check = error(mini(tmp_path / "m.gguf", kv={"llama.context_length": (512, VT.INT32)}), "loader_metadata")
    assert "wrong kind of value" in text(check) and "i32" in check.evidence[0] and "u32" in check.evidence[0]


def test_optional_key_of_the_wrong_type_also_stops_the_load(tmp_path):
    check = error(mini(tmp_path / "m.gguf", kv={"tokenizer.ggml.bos_token_id": (1, VT.INT32)}), "tokenizer")
    assert "(beginning-of-text token)" in text(check) and "tokenizer.ggml.bos_token_id" in check.evidence[0]


def test_unknown_and_missing_architecture(tmp_path):
    check = error(mini(tmp_path / "a.gguf", arch="llamb"), "loader_metadata")
    assert "'llamb'" in text(check) and "newer llama.cpp" in check.next_step.render("en")
    assert "mmproj" in error(mini(tmp_path / "c.gguf", arch="clip"), "loader_metadata").next_step.render("en")
    check = error(mini(tmp_path / "b.gguf", drop_keys=("general.architecture",)), "loader_metadata")
    assert "which architecture it is" in text(check)


def test_a_vision_projector_is_not_a_model(tmp_path):
    assert "mmproj" in text(error(mini(tmp_path / "clip.gguf", arch="clip"), "loader_metadata"))


def test_layer_count_out_of_range(tmp_path):
    check = error(mini(tmp_path / "m.gguf", kv={"llama.block_count": (0, VT.UINT32)}, drop_tensors=()),
                  "loader_metadata")
    assert "0 layers" in text(check)


def test_per_layer_array_of_the_wrong_length(tmp_path):
    check = error(mini(tmp_path / "m.gguf", kv={"llama.attention.head_count_kv": ([2, 2, 2], VT.ARRAY, VT.UINT32)}),
                  "loader_metadata")
    assert "3 entries for 2 layers" in text(check)


def test_per_layer_array_of_the_right_length_is_fine(tmp_path):
    found = rows(mini(tmp_path / "m.gguf", kv={"llama.attention.head_count_kv": ([2, 2], VT.ARRAY, VT.INT32)}))
    assert found["loader_metadata"].status is Status.OK and found["tensor_shapes"].status is Status.OK


def test_rope_size_must_match_the_head_size_for_llama(tmp_path):
    check = error(mini(tmp_path / "m.gguf", kv={"llama.rope.dimension_count": (2, VT.UINT32)}), "loader_metadata")
    assert "(2)" in text(check) and "(4)" in text(check)


def test_unknown_rope_scaling_type(tmp_path):
    check = error(mini(tmp_path / "m.gguf", kv={"llama.rope.scaling.type": ("lineaz", VT.STRING)}), "loader_metadata")
    assert "'lineaz'" in text(check)


def test_more_experts_used_than_exist(tmp_path):
    kv = {"llama.expert_count": (2, VT.UINT32), "llama.expert_used_count": (3, VT.UINT32)}
    assert "2 experts, 3 used" in text(error(mini(tmp_path / "m.gguf", kv=kv), "loader_metadata"))


def test_big_endian_files_cannot_load_here(tmp_path):
    import sys

    if sys.byteorder != "little":
        pytest.skip("a big-endian machine reads these")
    found = rows(mini(tmp_path / "be.gguf", big_endian=True))
    assert found["loader_metadata"].status is Status.ERROR and "big-endian" in text(found["loader_metadata"])


# --- tokenizer -------------------------------------------------------------------------------------------


def test_missing_token_list(tmp_path):
    check = error(mini(tmp_path / "m.gguf", drop_keys=("tokenizer.ggml.tokens",)), "tokenizer")
    assert "vocabulary (token list) is missing" in text(check)


def test_scores_shorter_than_the_tokens(tmp_path):
    check = error(mini(tmp_path / "m.gguf", kv={"tokenizer.ggml.scores": ([0.0] * 5, VT.ARRAY, VT.FLOAT32)}),
                  "tokenizer")
    assert "token scores list has 5 entries for 6 tokens" in text(check)


def test_longer_lists_and_missing_optional_lists_are_fine(tmp_path):
    kv = {"tokenizer.ggml.token_type": ([1] * 9, VT.ARRAY, VT.INT32)}
    found = rows(mini(tmp_path / "m.gguf", kv=kv, drop_keys=("tokenizer.ggml.scores",)))
    assert found["tokenizer"].status is Status.OK


def test_token_types_of_the_wrong_item_type(tmp_path):
    kv = {"tokenizer.ggml.token_type": ([1] * 6, VT.ARRAY, VT.UINT32)}
    check = error(mini(tmp_path / "m.gguf", kv=kv), "tokenizer")
    assert "token types" in text(check) and "array of u32" in check.evidence[0]


def test_unknown_tokenizer_type(tmp_path):
    check = error(mini(tmp_path / "m.gguf", kv={"tokenizer.ggml.model": ("llamx", VT.STRING)}), "tokenizer")
    assert "'llamx'" in text(check)


def test_bpe_needs_merges_and_a_known_pre_tokenizer(tmp_path):
    kv = {"tokenizer.ggml.model": ("gpt2", VT.STRING)}
    assert "merges are missing" in text(error(mini(tmp_path / "a.gguf", kv=kv), "tokenizer"))
    kv |= {"tokenizer.ggml.merges": (["a b"], VT.ARRAY, VT.STRING), "tokenizer.ggml.pre": ("qwen9", VT.STRING)}
    assert "'qwen9'" in text(error(mini(tmp_path / "b.gguf", kv=kv), "tokenizer"))
    kv["tokenizer.ggml.pre"] = ("qwen2", VT.STRING)
    assert rows(mini(tmp_path / "c.gguf", kv=kv))["tokenizer"].status is Status.OK


def test_two_tokens_with_the_same_text(tmp_path):
    tokens = ["<unk>", "<s>", "</s>", "<0x0A>", "a", "a"]
    check = error(mini(tmp_path / "m.gguf", kv={"tokenizer.ggml.tokens": (tokens, VT.ARRAY, VT.STRING)}), "tokenizer")
    assert "same ('a')" in text(check) and "index 5" in check.evidence[0]


def test_tokens_are_compared_as_llama_cpp_sees_them(tmp_path):
    tokens = ["<unk>", "<s>", "</s>", "<0x0A>", "a\0x", "a"]  # cut at the NUL byte: both read as "a"
    assert "same" in text(error(mini(tmp_path / "m.gguf", kv={"tokenizer.ggml.tokens": (tokens, VT.ARRAY, VT.STRING)}),
                                "tokenizer"))


def test_byte_token_that_is_not_written_like_one(tmp_path):
    kv = {"tokenizer.ggml.token_type": ([2, 3, 3, 6, 6, 1], VT.ARRAY, VT.INT32)}  # "a" marked as a byte token
    assert "token 4 is marked as a byte token" in text(error(mini(tmp_path / "m.gguf", kv=kv), "tokenizer"))


def test_phi3_names_need_their_tokens(tmp_path):
    check = error(mini(tmp_path / "m.gguf", kv={"general.name": ("My Phi3 Mini", VT.STRING)}), "tokenizer")
    assert "'<|endoftext|>'" in text(check)


# --- tensor names, layers, shapes ------------------------------------------------------------------------


def test_layer_lacking_a_part_every_other_layer_has(tmp_path):
    path = mini(tmp_path / "m.gguf", layers=3, drop_tensors=("blk.1.attn_output.weight",))
    check = error(path, "layers")
    assert text(check) == "This file is damaged: layer 1 lacks a part every other layer has (attention output)."
    assert check.evidence == ("missing tensor blk.1.attn_output.weight",)
    assert "下载" in check.next_step.render("zh") and "第 1 层" in check.message.render("zh")


def test_renamed_tensor_fails_twice(tmp_path):
    path = mini(tmp_path / "m.gguf", drop_tensors=("blk.0.ffn_up.weight",), tensors={"blk.0.ffn_uq.weight": (16, 8)})
    found = rows(path)
    assert found["layers"].status is Status.ERROR and "feed-forward up-projection" in text(found["layers"])
    assert found["tensor_names"].status is Status.ERROR and "blk.0.ffn_uq.weight" in text(found["tensor_names"])


def test_unused_but_known_name_is_refused(tmp_path):
    check = error(mini(tmp_path / "m.gguf", tensors={"blk.0.attn_q_norm.weight": (4,)}), "tensor_names")
    assert "blk.0.attn_q_norm.weight" in check.evidence[0]


def test_optional_bias_is_accepted_when_its_shape_is_right(tmp_path):
    assert rows(mini(tmp_path / "a.gguf", tensors={"blk.0.attn_q.bias": (8,)}))["tensor_shapes"].status is Status.OK
    check = error(mini(tmp_path / "b.gguf", tensors={"blk.0.attn_q.bias": (4,)}), "tensor_shapes")
    assert "(attention query bias)" in text(check)


def test_layer_beyond_the_declared_layers(tmp_path):
    check = error(mini(tmp_path / "m.gguf", tensors={"blk.2.attn_norm.weight": (8,)}), "tensor_names")
    assert "layer 2, but the model's layer count is 2" in text(check)


def test_wrong_shape_names_the_part_and_both_sizes(tmp_path):
    check = error(mini(tmp_path / "m.gguf", tensors={"blk.1.ffn_down.weight": (16, 8)}), "tensor_shapes")
    assert "layer 1 (feed-forward down-projection)" in text(check) and "expected 16 x 8, found 8 x 16" in text(check)


def test_trailing_dimensions_of_one_do_not_matter(tmp_path):
    path = mini(tmp_path / "m.gguf", tensors={"output_norm.weight": (1, 8)})  # [8, 1] in ggml order
    assert rows(path)["tensor_shapes"].status is Status.OK


def test_shapes_follow_the_hyper_parameters(tmp_path):
    check = error(mini(tmp_path / "m.gguf", kv={"llama.embedding_length": (16, VT.UINT32)}), "tensor_shapes")
    assert "token embeddings" in text(check)


def test_missing_global_part(tmp_path):
    check = error(mini(tmp_path / "m.gguf", drop_tensors=("output_norm.weight",)), "tensor_shapes")
    assert "(final normalisation)" in text(check)


def test_unknown_name_for_any_architecture(tmp_path):
    path = mini(tmp_path / "m.gguf", arch="olmo2", tensors={"blk.0.attn_outpht.weight": (8, 8)})
    check = error(path, "tensor_names")
    assert "blk.0.attn_outpht.weight" in text(check)


def test_generic_architecture_layers_are_compared(tmp_path):
    path = mini(tmp_path / "m.gguf", arch="olmo2", layers=4, drop_tensors=("blk.2.ffn_up.weight",))
    assert "layer 2 lacks a part every other layer has" in text(error(path, "layers"))
    assert "tensor_shapes" not in rows(path)  # no exact layout for olmo2: sizes are not judged


def test_leading_dense_layers_may_differ(tmp_path):
    kv = {"glm4moe.leading_dense_block_count": (1, VT.UINT32)}
    tensors = {f"blk.{i}.ffn_gate_inp.weight": (2, 8) for i in (1, 2, 3)}
    path = mini(tmp_path / "m.gguf", arch="glm4moe", layers=4, kv=kv, tensors=tensors)
    assert rows(path)["layers"].status is Status.OK


def _rewrite(src: Path, dst: Path, *, drop: str = "", reshape: tuple[str, tuple[int, ...]] | None = None) -> Path:
    """A copy of a generated model without tensor ``drop`` or with one tensor given another (numpy) shape."""
    reader = gguf.GGUFReader(src)
    writer = gguf.GGUFWriter(str(dst), reader.fields["general.architecture"].contents())
    for field in reader.fields.values():
        if field.name.startswith("GGUF.") or field.name == "general.architecture":
            continue
        item = field.types[1] if field.types[0] == VT.ARRAY else None
        writer.add_key_value(field.name, field.contents(), field.types[0], item)
    for tensor in reader.tensors:
        if tensor.name == drop:
            continue
        shape = tuple(int(n) for n in reversed(tensor.shape))
        if reshape and tensor.name == reshape[0]:
            shape = reshape[1]
        writer.add_tensor(tensor.name, np.zeros(shape, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return dst


def test_deepseek2_mla_layout_is_checked_exactly(tmp_path):
    from app.core.synthetic import write_model

    good = write_model("deepseek2", tmp_path / "d.gguf")
    assert all(c.status is Status.OK for c in rows(good).values())  # dense layer 0, experts in layer 1
    check = error(_rewrite(good, tmp_path / "no-kb.gguf", drop="blk.1.attn_k_b.weight"), "layers")
    assert "blk.1.attn_k_b.weight" in " ".join(check.evidence)
    # kv_a_mqa must be kv_lora_rank + rope dims (512 + 32) wide
    check = error(_rewrite(good, tmp_path / "mqa.gguf", reshape=("blk.0.attn_kv_a_mqa.weight", (512, 256))),
                  "tensor_shapes")
    assert "544" in " ".join(check.evidence)
    writer_check = error(mini(tmp_path / "fake.gguf", arch="deepseek2"), "loader_metadata")
    assert "q_lora_rank" in " ".join(writer_check.evidence)  # required outside the "lite" layer counts


def test_mamba2_state_layout_is_checked_exactly(tmp_path):
    from app.core.synthetic import write_model

    good = write_model("mamba2", tmp_path / "m.gguf")
    assert all(c.status is Status.OK for c in rows(good).values())
    check = error(_rewrite(good, tmp_path / "conv.gguf", reshape=("blk.1.ssm_conv1d.weight", (512, 4))),
                  "tensor_shapes")
    assert "blk.1.ssm_conv1d.weight" in " ".join(check.evidence)
    check = error(_rewrite(good, tmp_path / "no-a.gguf", drop="blk.0.ssm_a"), "layers")
    assert "blk.0.ssm_a" in " ".join(check.evidence)


def test_architectures_with_varying_layers_are_not_compared(tmp_path):
    path = mini(tmp_path / "m.gguf", arch="jamba", layers=4, drop_tensors=("blk.2.attn_q.weight",))
    check = rows(path)["layers"]
    assert check.status is Status.OK and "not compared" in text(check)


def test_split_model_is_judged_on_all_its_parts(tmp_path):
    mini(tmp_path / "m.gguf", split_max_tensors=8)
    parts = sorted(tmp_path.glob("m-*-of-*.gguf"))
    assert len(parts) == 3
    assert all(c.status is Status.OK for c in rows(parts[0]).values())
    mini(tmp_path / "x.gguf", split_max_tensors=8, drop_tensors=("blk.1.ffn_up.weight",))  # in part 2
    check = error(min(tmp_path.glob("x-*-of-*.gguf")), "layers")
    assert "layer 1 lacks a part every other layer has" in text(check)


def test_later_split_part_gets_no_loader_rows(tmp_path):
    path = mini(tmp_path / "x-00002-of-00002.gguf", kv={"split.no": (1, VT.UINT16), "split.count": (2, VT.UINT16)})
    assert not set(rows(path)) & set(NEW_CHECKS)


def test_a_152k_vocabulary_is_scanned_quickly(tmp_path):
    import time

    tokens = [f"tok_{i:06d}" for i in range(152_000)]
    kv = {"tokenizer.ggml.tokens": (tokens, VT.ARRAY, VT.STRING),
          "tokenizer.ggml.scores": ([0.0] * len(tokens), VT.ARRAY, VT.FLOAT32),
          "tokenizer.ggml.token_type": ([1] * len(tokens), VT.ARRAY, VT.INT32)}
    path = mini(tmp_path / "big.gguf", kv=kv, tensors={"token_embd.weight": (152_000, 8)},
                drop_tensors=("output.weight",))
    start = time.perf_counter()
    found = rows(path)
    elapsed = time.perf_counter() - start
    assert found["tokenizer"].status is Status.OK and "152000 tokens" in text(found["tokenizer"])
    assert elapsed < 2.0, elapsed


def test_tensor_name_cut_at_a_nul_byte_collides(tmp_path):
    path = mini(tmp_path / "m.gguf")
    data = bytearray(path.read_bytes())
    name = b"blk.0.attn_q.weight"
    at = data.index(struct.pack("<Q", len(name)) + name)
    data[at + 8 + len(b"blk.0.attn_q")] = 0  # "blk.0.attn_q\0weight": ggml keeps "blk.0.attn_q"
    path.write_bytes(bytes(data))
    found = rows(path)
    assert found["layers"].status is Status.ERROR and found["tensor_names"].status is Status.ERROR


# --- per-architecture rules taken from llama.cpp's load functions ----------------------------------------------


def _phi3_tensors(layers: int = 2, embd: int = 8, ff: int = 16) -> tuple[dict, tuple]:
    """phi3 keeps q, k and v in one attn_qkv and gate and up in one ffn_up (2 x ff rows)."""
    add = {f"blk.{i}.attn_qkv.weight": (3 * embd, embd) for i in range(layers)}
    add |= {f"blk.{i}.ffn_up.weight": (2 * ff, embd) for i in range(layers)}
    drop = tuple(f"blk.{i}.{part}.weight" for i in range(layers) for part in ("attn_q", "attn_k", "attn_v", "ffn_gate"))
    return add, drop


def test_phi3_fused_layout(tmp_path):
    add, drop = _phi3_tensors()
    found = rows(mini(tmp_path / "m.gguf", arch="phi3", tensors=add, drop_tensors=drop))
    assert all(c.status is Status.OK for c in found.values()), {k: text(c) for k, c in found.items()}
    add["blk.1.ffn_up.weight"] = (16, 8)  # one ff wide instead of two
    assert "expected 8 x 32, found 8 x 16" in text(error(mini(tmp_path / "b.gguf", arch="phi3", tensors=add,
                                                            drop_tensors=drop), "tensor_shapes"))


def test_phi3_does_not_insist_on_attention_weights(tmp_path):
    """llama.cpp asks phi3 for q/k/v (or the fused qkv) as optional tensors: a file without them still loads."""
    add, drop = _phi3_tensors()
    del add["blk.0.attn_qkv.weight"]
    found = rows(mini(tmp_path / "m.gguf", arch="phi3", tensors=add, drop_tensors=drop))
    assert found["layers"].status is Status.OK and found["tensor_shapes"].status is Status.OK


def _gemma3_tensors(layers: int = 2, embd: int = 8, head: int = 4) -> dict:
    add = {}
    for i in range(layers):
        add |= {f"blk.{i}.post_attention_norm.weight": (embd,), f"blk.{i}.post_ffw_norm.weight": (embd,),
                f"blk.{i}.attn_q_norm.weight": (head,), f"blk.{i}.attn_k_norm.weight": (head,)}
    return add


def test_gemma3_sizes_every_layer_by_layer_0_window(tmp_path):
    """With a sliding window, layer 0 is a window layer (pattern of 6), and llama.cpp sizes every layer's
    attention by layer 0's head size: key_length_swa, when the file gives one."""
    window = {"gemma3.attention.sliding_window": (16, VT.UINT32)}
    ok = rows(mini(tmp_path / "a.gguf", arch="gemma3", kv=window, tensors=_gemma3_tensors()))
    assert all(c.status is Status.OK for c in ok.values()), {k: text(c) for k, c in ok.items()}
    swa_head = window | {"gemma3.attention.key_length_swa": (2, VT.UINT32)}
    check = error(mini(tmp_path / "b.gguf", arch="gemma3", kv=swa_head, tensors=_gemma3_tensors()), "tensor_shapes")
    assert "attention query" in text(check)
    full_first = swa_head | {"gemma3.attention.sliding_window_pattern": ([False, True], VT.ARRAY, VT.BOOL)}
    found = rows(mini(tmp_path / "c.gguf", arch="gemma3", kv=full_first, tensors=_gemma3_tensors()))
    assert found["tensor_shapes"].status is Status.OK  # layer 0 has full attention: the full head size applies


def test_gemma3_needs_its_extra_norms(tmp_path):
    tensors = _gemma3_tensors()
    del tensors["blk.1.post_ffw_norm.weight"]
    check = error(mini(tmp_path / "m.gguf", arch="gemma3", tensors=tensors), "layers")
    assert "layer 1 lacks a part every other layer has (post-feed-forward normalisation)" in text(check)
    assert check.evidence == ("missing tensor blk.1.post_ffw_norm.weight",)


def test_granitehybrid_layers_follow_head_count_kv(tmp_path):
    from app.core.synthetic import write_model

    good = write_model("granitehybrid", tmp_path / "h.gguf")  # layers 0 and 2 Mamba-2, layer 1 attention
    assert all(c.status is Status.OK for c in rows(good).values())
    missing = validate(_rewrite(good, tmp_path / "no-k.gguf", drop="blk.1.attn_k.weight"))
    assert missing.has_errors and any("blk.1.attn_k.weight" in " ".join(c.evidence) for c in missing.checks)
    check = error(_rewrite(good, tmp_path / "in.gguf", reshape=("blk.2.ssm_in.weight", (1000, 256))),
                  "tensor_shapes")
    assert "blk.2.ssm_in.weight" in " ".join(check.evidence)
