"""Bounded GGUF reader for untrusted files: header, metadata and tensor infos, never tensor data.

Unlike gguf-py's GGUFReader it never builds a 152k-entry token list (it only counts it) and it
checks each count against the bytes that remain, so a 49-byte file claiming 2^63 array items
fails in microseconds instead of eating memory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from app.core.gguf.binary import MAX_ARRAY, Cursor, malformed
from app.core.gguf.errors import GGUFError
from app.core.gguf.header import read_header
from app.core.gguf.model_info import ModelInfo, TensorInfo, build_model_info, merge_shard_summaries
from app.core.gguf.quant_types import type_info, type_name
from app.core.gguf.shard_names import shard_paths
from app.core.text import T

DEFAULT_ALIGNMENT = 32
MAX_NAME = 64  # GGML_MAX_NAME: tensor names must be shorter
MAX_DIMS = 4
KEEP_STRING = 1 << 20  # longer metadata strings are skipped (their length is still known)
KEEP_ARRAY = 4096  # numeric arrays up to this many items are kept (per-layer values, <= 512 layers)
KEEP_STRING_ARRAY = 64
_INT64_MAX = (1 << 63) - 1

# GGUF value type -> struct code of one item
_SCALAR_CODES = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_SCALAR_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
STRING, ARRAY = 8, 9


@dataclass
class RawGGUF:
    path: str
    file_size: int
    version: int = 0
    big_endian: bool = False
    alignment: int = DEFAULT_ALIGNMENT
    metadata: dict[str, Any] = field(default_factory=dict)
    value_types: dict[str, int] = field(default_factory=dict)
    array_lengths: dict[str, int] = field(default_factory=dict)
    array_types: dict[str, int] = field(default_factory=dict)  # key -> GGUF type of its items
    array_offsets: dict[str, int] = field(default_factory=dict)  # key -> file offset of its first item
    array_ends: dict[str, int] = field(default_factory=dict)  # string arrays: file offset just past the last item
    string_lengths: dict[str, int] = field(default_factory=dict)
    tensors: list[TensorInfo] = field(default_factory=list)
    data_offset: int = 0
    data_size: int = 0


def _read_array(cur: Cursor, raw: RawGGUF, key: str) -> Any:
    item_type = cur.u32(f"type of '{key}'")
    count = cur.u64(f"length of '{key}'")
    if count > MAX_ARRAY:
        raise malformed(
            "The list '{key}' claims {count} items, more than llama.cpp allows.",
            "列表“{key}”声称有 {count} 项，超出 llama.cpp 允许的上限。",
            cur.pos - 8,
            key=key,
            count=count,
        )
    raw.array_lengths[key] = count
    raw.array_types[key] = item_type
    raw.array_offsets[key] = cur.pos
    if item_type == STRING:
        value = None
        if count <= KEEP_STRING_ARRAY:
            value = [cur.string(key, KEEP_STRING)[0] for _ in range(count)]
        else:
            cur.skip_strings(count, f"list '{key}'")
        raw.array_ends[key] = cur.pos
        return value
    code = _SCALAR_CODES.get(item_type)
    if code is None:  # nested arrays and unknown types: llama.cpp rejects them too
        raise malformed(
            "The metadata entry '{key}' has an invalid item type ({item_type}).",
            "元数据项“{key}”的元素类型无效（{item_type}）。",
            cur.pos - 12,
            key=key,
            item_type=item_type,
        )
    size = _SCALAR_SIZES[item_type]
    cur.need(count * size, f"list '{key}'")
    if count > KEEP_ARRAY:
        cur.skip(count * size, key)
        return None
    return [cur.scalar(code, key) for _ in range(count)]


def _read_kv(cur: Cursor, raw: RawGGUF) -> None:
    start = cur.pos
    key, _ = cur.string("metadata key", KEEP_STRING)
    if not key:
        raise malformed("A metadata entry has an empty name.", "某个元数据项的名称为空。", start)
    if key in raw.value_types:
        raise malformed(
            "The metadata entry '{key}' appears twice; llama.cpp refuses such files.",
            "元数据项“{key}”出现了两次；llama.cpp 会拒绝此类文件。",
            start,
            key=key,
        )
    value_type = cur.u32(f"type of '{key}'")
    raw.value_types[key] = value_type
    if value_type == STRING:
        value, length = cur.string(key, KEEP_STRING)
        raw.string_lengths[key] = length
    elif value_type == ARRAY:
        value = _read_array(cur, raw, key)
    elif value_type in _SCALAR_CODES:
        value = cur.scalar(_SCALAR_CODES[value_type], key)
    else:
        raise malformed(
            "The metadata entry '{key}' has an invalid type ({value_type}).",
            "元数据项“{key}”的类型无效（{value_type}）。",
            start,
            key=key,
            value_type=value_type,
        )
    raw.metadata[key] = value


def _alignment(raw: RawGGUF) -> int:
    if "general.alignment" not in raw.metadata:
        return DEFAULT_ALIGNMENT
    value = raw.metadata["general.alignment"]
    if raw.value_types["general.alignment"] != 4 or value == 0 or value & (value - 1):
        raise malformed(
            "general.alignment is {value}; it must be a power of two stored as UINT32.",
            "general.alignment 为 {value}；它必须是以 UINT32 存储的 2 的幂。",
            0,
            value=value,
        )
    return value


def _read_tensor_info(cur: Cursor, seen: set[str]) -> TensorInfo:
    start = cur.pos
    name, length = cur.string("tensor name", MAX_NAME)
    if name is None or length >= MAX_NAME:
        raise malformed("A tensor name is {length} bytes long; llama.cpp allows at most 63.",
                        "某个张量名称长 {length} 字节；llama.cpp 最多允许 63 字节。", start, length=length)
    if name in seen:
        raise malformed("The tensor '{name}' appears twice.", "张量“{name}”出现了两次。", start, name=name)
    seen.add(name)
    n_dims = cur.u32(f"dimensions of '{name}'")
    if n_dims > MAX_DIMS:
        raise malformed("The tensor '{name}' claims {n_dims} dimensions (at most 4).",
                        "张量“{name}”声称有 {n_dims} 个维度（最多 4 个）。", start, name=name, n_dims=n_dims)
    shape = tuple(cur.scalar("q", f"shape of '{name}'") for _ in range(n_dims))
    n_elements = 1
    for dim in shape:
        if dim < 0 or (dim > 1 and n_elements > _INT64_MAX // dim):
            raise malformed("The tensor '{name}' has an impossible shape {shape}.",
                            "张量“{name}”的形状 {shape} 不可能成立。", start, name=name, shape=list(shape))
        n_elements *= dim
    type_id = cur.scalar("i", f"type of '{name}'")
    offset = cur.u64(f"offset of '{name}'")
    info = type_info(type_id)
    row = shape[0] if shape else 1
    n_bytes = None
    if info is not None and row % info.block_size == 0:
        n_bytes = n_elements // info.block_size * info.type_size
    return TensorInfo(name, shape, type_id, offset, n_bytes)


def read_raw(path: str | os.PathLike[str]) -> RawGGUF:
    """Parse header, metadata and tensor infos of ``path``; raise GGUFError on anything malformed."""
    path = os.fspath(path)
    try:
        stream = open(path, "rb")
    except OSError as exc:
        raise GGUFError(
            T("The file cannot be opened: {error}", "无法打开文件：{error}", error=exc.strerror or str(exc)),
            T("Check that the file exists and that you may read it.", "请确认文件存在且您有读取权限。"),
            check_id="path",
        ) from exc
    with stream:
        return read_raw_stream(stream, os.fstat(stream.fileno()).st_size, path)


def read_raw_stream(stream: BinaryIO, size: int, name: str) -> RawGGUF:
    """Header, metadata and tensor infos of the ``size``-byte GGUF in ``stream`` (a file, or a model on the Hub read
    through range requests); ``name`` stands for its path. GGUFError on anything malformed."""
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


def _add_other_shards(info: ModelInfo, raw: RawGGUF) -> None:
    shards = shard_paths(Path(raw.path))
    if not shards or not all(p.is_file() for p in shards):
        return  # the split check reports missing parts
    tensors: list[TensorInfo] = []
    total = 0
    for shard in shards:
        try:
            other = raw if shard.name == Path(raw.path).name else read_raw(shard)
        except GGUFError:
            return  # the split check reports unreadable parts
        tensors += other.tensors
        total += other.file_size
    merge_shard_summaries(info, tensors, [str(p) for p in shards], total, type_name)


def read_model_info(path: str | os.PathLike[str]) -> ModelInfo:
    """What the app needs to know about a GGUF file; raises GGUFError for files it cannot read.

    For a split model whose parts are all present, the size summaries cover every part.
    """
    raw = read_raw(path)
    info = build_model_info(raw, type_name)
    if (info.split_count or 0) > 1:
        _add_other_shards(info, raw)
    return info
