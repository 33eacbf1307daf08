"""The bounded reader against gguf-py's GGUFReader (the oracle) on files generated here."""

from __future__ import annotations

import gguf
import pytest

from app.core.gguf.quant_types import KNOWN_TYPES, type_name
from app.core.gguf.reader import read_model_info
from tests.unit.core.gguf.test_support import set_version, write_gguf


def _oracle_tensors(path):
    reader = gguf.GGUFReader(path)
    start = reader.data_offset
    return reader, [(t.name, tuple(int(x) for x in t.shape), int(t.tensor_type), t.data_offset - start, int(t.n_bytes))
                    for t in reader.tensors]


def _ours(info):
    return [(t.name, t.shape, t.type_id, t.offset, t.n_bytes) for t in info.tensors]


@pytest.mark.parametrize("spec", [
    {}, {"n_layers": 4, "n_head_kv": 2, "f16": True}, {"n_layers": 1, "n_embd": 32, "n_head": 2, "n_extra_tokens": 300},
])
def test_matches_gguf_py_on_generated_llama_models(make_model, spec):
    path = make_model(**spec)
    reader, expected = _oracle_tensors(path)
    info = read_model_info(path)
    assert _ours(info) == expected
    assert info.data_offset == reader.data_offset
    assert info.version == 3 and not info.big_endian and info.alignment == 32
    assert info.architecture == "llama" and info.name == "tiny-random-llama"
    assert info.block_count == spec.get("n_layers", 2)
    assert info.vocab_size == len(reader.fields["tokenizer.ggml.tokens"].data)
    assert info.has_chat_template
    assert info.data_end == path.stat().st_size
    assert info.parameter_count == sum(int(t.n_elements) for t in reader.tensors)
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or field.types[0] == gguf.GGUFValueType.ARRAY:
            continue
        assert info.metadata[key] == pytest.approx(field.contents()), key


def test_head_counts_scalar_are_expanded_per_layer(make_model):
    info = read_model_info(make_model(n_layers=3, n_head=4, n_head_kv=2, n_embd=64))
    assert info.head_count == [4, 4, 4]
    assert info.head_count_kv == [2, 2, 2]
    assert info.key_length == info.value_length == 16
    assert info.embedding_length == 64 and info.context_length == 4096


def test_per_layer_head_count_arrays(tmp_path):
    path = write_gguf(tmp_path / "m.gguf", n_layers=3, head_count=[8, 4, 2], head_count_kv=[2, 1, 0], embd=32)
    info = read_model_info(path)
    assert info.head_count == [8, 4, 2]
    assert info.head_count_kv == [2, 1, 0]
    assert info.key_length == 32 // 8  # n_embd / n_head of layer 0, as llama.cpp computes it
    assert info.array_lengths["llama.attention.head_count"] == 3


def test_summaries_by_type_and_layer(tmp_path):
    path = write_gguf(tmp_path / "m.gguf", n_layers=2, embd=32)
    info = read_model_info(path)
    per_layer = 32 * 4 + 32 * 32 * 2  # f32 norm + f16 q
    assert info.layer_bytes == [per_layer, per_layer]
    assert info.non_layer_bytes == {"token_embd.weight": 16 * 32 * 2, "output.weight": 16 * 32 * 4}
    assert info.tensor_types == {"F16": {"count": 3, "bytes": 16 * 32 * 2 + 2 * 32 * 32 * 2},
                                 "F32": {"count": 3, "bytes": 2 * 32 * 4 + 16 * 32 * 4}}
    assert info.file_type == 1 and info.file_type_name == "MOSTLY_F16"
    assert info.to_dict()["tensor_count"] == 6


def test_big_endian_file(tmp_path):
    path = write_gguf(tmp_path / "be.gguf", big_endian=True, head_count=[4, 2, 2])
    reader, expected = _oracle_tensors(path)
    info = read_model_info(path)
    assert info.big_endian and info.version == 3
    assert _ours(info) == expected
    assert info.head_count == [4, 2, 2] and info.block_count == 3
    assert info.vocab_size == 16 and info.name == "test-model"


def test_version_2_file(tmp_path):
    path = write_gguf(tmp_path / "v2.gguf")
    set_version(path, 2)
    info = read_model_info(path)
    assert info.version == 2
    assert info.block_count == 3 and len(info.tensors) == 8


def test_custom_alignment(tmp_path):
    path = write_gguf(tmp_path / "a.gguf", alignment=256)
    reader, expected = _oracle_tensors(path)
    info = read_model_info(path)
    assert info.alignment == 256
    assert info.data_offset % 256 == 0 and info.data_offset == reader.data_offset
    assert _ours(info) == expected


def test_large_vocab_and_merges_are_counted_not_kept(tmp_path):
    path = write_gguf(tmp_path / "v.gguf", n_tokens=20000, n_merges=19000)
    info = read_model_info(path)
    assert info.vocab_size == 20000
    assert info.array_lengths["tokenizer.ggml.merges"] == 19000
    assert "tokenizer.ggml.tokens" not in info.metadata


def test_quant_type_sizes_match_gguf_py():
    for quant, (block, size) in gguf.GGML_QUANT_SIZES.items():
        assert (KNOWN_TYPES[int(quant)].block_size, KNOWN_TYPES[int(quant)].type_size) == (block, size), quant.name
        assert type_name(int(quant)) == quant.name
    assert (KNOWN_TYPES[42].name, KNOWN_TYPES[42].block_size, KNOWN_TYPES[42].type_size) == ("Q2_0", 64, 18)


def test_strings_crossing_the_read_window(tmp_path, monkeypatch):
    from app.core.gguf import binary

    path = write_gguf(tmp_path / "w.gguf", n_tokens=3000, n_merges=2000)
    expected = read_model_info(path)
    monkeypatch.setattr(binary, "WINDOW", 37)  # every few strings cross the window edge
    info = read_model_info(path)
    assert info.vocab_size == 3000 and info.array_lengths["tokenizer.ggml.merges"] == 2000
    assert [t.offset for t in info.tensors] == [t.offset for t in expected.tensors]
    assert info.metadata == expected.metadata


def test_huge_chat_template_is_counted_not_kept(tmp_path):
    path = write_gguf(tmp_path / "t.gguf", extra_kv={"tokenizer.chat_template.huge": "x" * (3 << 20)})
    info = read_model_info(path)
    assert info.metadata["tokenizer.chat_template.huge"] is None
    assert info.has_chat_template and len(info.tensors) == 8
