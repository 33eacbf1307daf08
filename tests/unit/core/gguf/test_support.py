"""GGUF files written on the spot for the GGUF tests (gguf-py writes them; our reader is under test).

Also holds two tests that the generated files are what the other tests assume.
"""

from __future__ import annotations

import struct
from pathlib import Path

import gguf
import numpy as np


def write_gguf(path: Path, *, arch: str = "llama", n_layers: int = 3, head_count=4, head_count_kv=None,
               big_endian: bool = False, alignment: int | None = None, extra_kv=None, n_tokens: int = 16,
               n_merges: int = 0, tensors=None, embd: int = 32) -> Path:
    """A small llama-like GGUF: metadata plus tiny F32/F16 tensors (not meant to be loaded by llama.cpp)."""
    endian = gguf.GGUFEndian.BIG if big_endian else gguf.GGUFEndian.LITTLE
    writer = gguf.GGUFWriter(str(path), arch, endianess=endian)
    writer.add_name("test-model")
    writer.add_context_length(2048)
    writer.add_embedding_length(embd)
    writer.add_block_count(n_layers)
    writer.add_head_count(head_count)
    writer.add_head_count_kv(head_count if head_count_kv is None else head_count_kv)
    writer.add_file_type(1)
    if alignment:
        writer.add_custom_alignment(alignment)
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list([f"t{i}" for i in range(n_tokens)])
    if n_merges:
        writer.add_token_merges([f"t{i} t{i + 1}" for i in range(n_merges)])
    writer.add_chat_template("{{ messages }}")
    for key, value in (extra_kv or {}).items():
        writer.add_key_value(key, value[0], value[1]) if isinstance(value, tuple) else writer.add_string(key, value)
    for name, array in tensors if tensors is not None else default_tensors(n_layers, embd):
        writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def default_tensors(n_layers: int, embd: int = 32):
    rng = np.random.default_rng(0)
    yield "token_embd.weight", rng.standard_normal((16, embd)).astype(np.float16)
    for i in range(n_layers):
        yield f"blk.{i}.attn_norm.weight", np.ones(embd, dtype=np.float32)
        yield f"blk.{i}.attn_q.weight", rng.standard_normal((embd, embd)).astype(np.float16)
    yield "output.weight", rng.standard_normal((16, embd)).astype(np.float32)


def set_version(path: Path, version: int) -> None:
    with open(path, "r+b") as f:
        f.seek(4)
        f.write(struct.pack("<I", version))


def tensor_type_offset(path: Path, name: str) -> int:
    """Byte position of the i32 type field in ``name``'s tensor info (little-endian file)."""
    data = path.read_bytes()
    encoded = name.encode()
    at = data.index(struct.pack("<Q", len(encoded)) + encoded)
    pos = at + 8 + len(encoded)
    (n_dims,) = struct.unpack_from("<I", data, pos)
    return pos + 4 + 8 * n_dims


def set_tensor_type(path: Path, name: str, type_id: int) -> None:
    with open(path, "r+b") as f:
        f.seek(tensor_type_offset(path, name))
        f.write(struct.pack("<i", type_id))


def test_generated_file_is_read_by_gguf_py(tmp_path):
    path = write_gguf(tmp_path / "m.gguf", head_count=[4, 4, 2])
    reader = gguf.GGUFReader(path)
    assert list(reader.fields["llama.attention.head_count"].contents()) == [4, 4, 2]
    assert len(reader.tensors) == 8


def test_tensor_type_offset_points_at_the_type(tmp_path):
    path = write_gguf(tmp_path / "m.gguf")
    assert struct.unpack_from("<i", path.read_bytes(), tensor_type_offset(path, "output.weight"))[0] == 0
    assert struct.unpack_from("<i", path.read_bytes(), tensor_type_offset(path, "token_embd.weight"))[0] == 1
