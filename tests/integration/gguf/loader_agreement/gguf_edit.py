"""A small byte-level GGUF editor (little-endian files) for realistic corruptions.

``GGUFFile.parse(data)`` splits a file into its header, key-value records, tensor infos and the data
section, each kept as the bytes it was; ``to_bytes()`` writes them back the way a GGUF writer would
(tensor infos, then padding to the alignment, then the data). Edits that keep every length (a flipped
byte in a name, a type field changed to one of the same size) therefore give the same bytes as
flipping them in place, while edits that change a length (an array one item shorter, a tensor
deleted, an extra dimension) give a file that is still consistently laid out.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from app.core.gguf.quant_types import type_info

SCALAR_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
STRING, ARRAY = 8, 9


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ValueError("truncated")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4))[0]

    def u64(self) -> int:
        return struct.unpack("<Q", self.take(8))[0]

    def string(self) -> bytes:
        return self.take(self.u64())


def _skip_value(r: _Reader, vtype: int) -> None:
    if vtype == STRING:
        r.string()
    elif vtype == ARRAY:
        item, count = r.u32(), r.u64()
        if item == STRING:
            for _ in range(count):
                r.string()
        else:
            r.take(SCALAR_SIZES[item] * count)
    else:
        r.take(SCALAR_SIZES[vtype])


@dataclass
class KV:
    key: bytes
    vtype: int
    payload: bytes  # everything after the value type: the value, or item type + count + items

    def to_bytes(self) -> bytes:
        return struct.pack("<Q", len(self.key)) + self.key + struct.pack("<I", self.vtype) + self.payload

    @property
    def item_type(self) -> int | None:
        return struct.unpack_from("<I", self.payload)[0] if self.vtype == ARRAY else None

    def array_items(self) -> list[bytes]:
        """The raw items of an array (strings with their length prefix)."""
        r = _Reader(self.payload)
        item, count = r.u32(), r.u64()
        items = []
        for _ in range(count):
            start = r.pos
            _skip_value(r, item)
            items.append(self.payload[start:r.pos])
        return items

    def with_items(self, items: list[bytes]) -> KV:
        return KV(self.key, self.vtype, struct.pack("<IQ", self.item_type, len(items)) + b"".join(items))


@dataclass
class TensorRecord:
    name: bytes
    dims: list[int]
    ttype: int
    offset: int

    def to_bytes(self) -> bytes:
        out = struct.pack("<Q", len(self.name)) + self.name + struct.pack("<I", len(self.dims))
        out += b"".join(struct.pack("<q", d) for d in self.dims)
        return out + struct.pack("<iQ", self.ttype, self.offset)

    def n_bytes(self) -> int | None:
        info = type_info(self.ttype)
        n = 1
        for d in self.dims:
            n *= d
        if info is None or (self.dims and self.dims[0] % info.block_size):
            return None
        return n // info.block_size * info.type_size


@dataclass
class GGUFFile:
    version: int
    kvs: list[KV] = field(default_factory=list)
    tensors: list[TensorRecord] = field(default_factory=list)
    data: bytes = b""  # the data section, from the aligned start to the end of the file
    alignment: int = 32

    @classmethod
    def parse(cls, data: bytes) -> GGUFFile:
        r = _Reader(data)
        assert r.take(4) == b"GGUF"
        version = r.u32()
        n_tensors, n_kv = r.u64(), r.u64()
        file = cls(version)
        for _ in range(n_kv):
            key = r.string()
            vtype = r.u32()
            start = r.pos
            _skip_value(r, vtype)
            file.kvs.append(KV(key, vtype, data[start:r.pos]))
            if key == b"general.alignment":
                file.alignment = struct.unpack_from("<I", data, start)[0]
        for _ in range(n_tensors):
            name = r.string()
            n_dims = r.u32()
            dims = [struct.unpack("<q", r.take(8))[0] for _ in range(n_dims)]
            ttype = struct.unpack("<i", r.take(4))[0]
            file.tensors.append(TensorRecord(name, dims, ttype, r.u64()))
        start = r.pos + (-r.pos) % file.alignment
        file.data = data[start:]
        return file

    def header_bytes(self) -> bytes:
        out = b"GGUF" + struct.pack("<IQQ", self.version, len(self.tensors), len(self.kvs))
        out += b"".join(kv.to_bytes() for kv in self.kvs)
        return out + b"".join(t.to_bytes() for t in self.tensors)

    def to_bytes(self) -> bytes:
        header = self.header_bytes()
        return header + b"\0" * ((-len(header)) % self.alignment) + self.data

    def kv(self, key: bytes) -> KV | None:
        return next((kv for kv in self.kvs if kv.key == key), None)

    def chunks(self) -> list[bytes]:
        """Each tensor's data (padded to the alignment), in file order."""
        out = []
        for t in self.tensors:
            size = t.n_bytes() or 0
            out.append(self.data[t.offset:t.offset + size + (-size) % self.alignment])
        return out

    def relayout(self, chunks: list[bytes]) -> None:
        """Write ``chunks`` (one per tensor, in order) as the data section, with offsets a writer would give."""
        offset, data = 0, []
        for t, chunk in zip(self.tensors, chunks, strict=True):
            t.offset = offset
            chunk += b"\0" * ((-len(chunk)) % self.alignment)
            data.append(chunk)
            offset += len(chunk)
        self.data = b"".join(data)
