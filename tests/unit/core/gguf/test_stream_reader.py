"""The bounded reader over a stream reads what it reads from a path, and refuses damaged bytes the same way."""

from __future__ import annotations

import io

import pytest

from app.core.gguf.errors import GGUFError
from app.core.gguf.reader import read_raw, read_raw_stream
from app.core.gguf.stream_reader import model_info_from_raw


def test_same_header_as_from_the_path(make_model):
    path = make_model("m.gguf", n_extra_tokens=500, f16=True)
    data = path.read_bytes()
    from_stream = read_raw_stream(io.BytesIO(data), len(data), "https://hub/m.gguf")
    from_path = read_raw(path)
    assert from_stream.path == "https://hub/m.gguf"
    assert (from_stream.metadata, from_stream.tensors, from_stream.data_offset, from_stream.data_size) == (
        from_path.metadata, from_path.tensors, from_path.data_offset, from_path.data_size)
    assert model_info_from_raw(from_stream).vocab_size == 259 + 500


def test_a_cut_header_is_the_truncation_error(make_model):
    data = make_model("m.gguf").read_bytes()[:300]
    with pytest.raises(GGUFError) as caught:
        read_raw_stream(io.BytesIO(data), len(data), "m.gguf")
    assert caught.value.check_id == "truncation"
