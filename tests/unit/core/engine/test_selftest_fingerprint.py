"""Which build a stored engine self-test belongs to: the built-in engine ignores the llama-server path in the
settings; llama-server's own binary is part of its build."""

from __future__ import annotations

from app.core.engine.selftest import build_fingerprint


def test_the_builtin_engine_is_the_same_build_whatever_llama_server_is_named(tmp_path):
    other = tmp_path / "no-such-llama-server"
    assert build_fingerprint("embedded", str(other)) == build_fingerprint("embedded")


def test_each_llama_server_binary_is_its_own_build(tmp_path):
    first, second = tmp_path / "a" / "llama-server", tmp_path / "b" / "llama-server"
    for path, content in ((first, b"one"), (second, b"two!")):
        path.parent.mkdir()
        path.write_bytes(content)
    assert build_fingerprint("llama-server", str(first)) != build_fingerprint("llama-server", str(second))
