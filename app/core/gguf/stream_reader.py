"""The bounded GGUF reader over any seekable stream, not only a file on disk: the header of a model on the Hub is
read through HTTP range requests (app.core.hub.ranged) with the same checks as a local file.

:func:`read_raw_stream` is :func:`app.core.gguf.reader.read_raw` without the ``open``: the same cursor, header, key
and tensor-info readers, so there is one parser. ``name`` stands for the path in the result (a URL, a file name).
"""

from __future__ import annotations

from typing import BinaryIO

from app.core.gguf.binary import Cursor
from app.core.gguf.header import read_header
from app.core.gguf.model_info import ModelInfo, TensorInfo, build_model_info, merge_shard_summaries
from app.core.gguf.quant_types import type_name
from app.core.gguf.reader import RawGGUF, _alignment, _read_kv, _read_tensor_info


def read_raw_stream(stream: BinaryIO, size: int, name: str) -> RawGGUF:
    """Header, metadata and tensor infos of the ``size``-byte GGUF in ``stream``; GGUFError on anything malformed."""
    cur = Cursor(stream, size)
    raw = RawGGUF(path=name, file_size=size)
    n_tensors, n_kv, raw.version = read_header(cur)
    raw.big_endian = cur.big_endian
    for _ in range(n_kv):
        _read_kv(cur, raw)
    raw.alignment = _alignment(raw)
    seen: set[str] = set()
    raw.tensors = [_read_tensor_info(cur, seen) for _ in range(n_tensors)]
    pad = (-cur.pos) % raw.alignment if n_tensors else 0
    raw.data_offset = cur.pos + pad
    raw.data_size = max((t.offset + t.n_bytes for t in raw.tensors if t.n_bytes is not None), default=0)
    return raw


def model_info_from_raw(raw: RawGGUF) -> ModelInfo:
    return build_model_info(raw, type_name)


def merge_shards(info: ModelInfo, shards: list[RawGGUF]) -> None:
    """Make ``info`` (the first shard's) cover every shard of a split model, as the reader does for local parts."""
    tensors: list[TensorInfo] = [t for shard in shards for t in shard.tensors]
    merge_shard_summaries(info, tensors, [shard.path for shard in shards], sum(s.file_size for s in shards), type_name)
