"""Seeded, deterministic corruptions of a valid GGUF, each one a realistic kind of damage.

``mutate(rng, pristine)`` returns ``(label, bytes)``: the label names what was done (kept short for the
test's disagreement report). Kinds: a metadata key name with a byte flipped; a value or array item type
changed to another of the same size; an array one item shorter or longer; a hyper-parameter's value
changed; a tensor name with a byte flipped; a tensor deleted (data and offsets re-laid as a writer
would); a dimension changed, swapped or added; a tensor type changed; the file cut short; a token's
text with a byte flipped, or copied over another token; a token's type changed; a string value with a
byte flipped.
"""

from __future__ import annotations

import random
import struct

from tests.integration.gguf.loader_agreement.gguf_edit import ARRAY, STRING, GGUFFile

_NAME_CHARS = b"abcdefghijklmnopqrstuvwxyz0123456789_."
_SAME_SIZE = [(0, 1, 7), (2, 3), (4, 5, 6), (10, 11, 12)]  # u8/i8/bool, u16/i16, u32/i32/f32, u64/i64/f64
_TENSOR_TYPES = [0, 1, 2, 8, 12, 26, 30, 4, 31, 99, 41]


def _flip(rng: random.Random, text: bytes) -> bytes:
    pos = rng.randrange(len(text))
    roll = rng.random()
    if roll < 0.08:
        new = 0
    elif roll < 0.14:
        new = rng.randrange(128, 256)
    else:
        new = rng.choice([c for c in _NAME_CHARS if c != text[pos]])
    return text[:pos] + bytes([new]) + text[pos + 1:]


def key_name(rng, f: GGUFFile) -> str:
    kv = rng.choice(f.kvs)
    old = kv.key
    kv.key = _flip(rng, kv.key)
    return f"key {old.decode()} -> {kv.key!r}"


def value_type(rng, f: GGUFFile) -> str | None:
    kv = rng.choice([kv for kv in f.kvs if kv.vtype != STRING and (kv.vtype != ARRAY or kv.item_type != STRING)])
    if kv.vtype == ARRAY:
        group = next(g for g in _SAME_SIZE if kv.item_type in g)
        new = rng.choice([t for t in group if t != kv.item_type])
        kv.payload = struct.pack("<I", new) + kv.payload[4:]
        return f"items of {kv.key.decode()} -> type {new}"
    group = next(g for g in _SAME_SIZE if kv.vtype in g)
    new = rng.choice([t for t in group if t != kv.vtype])
    old, kv.vtype = kv.vtype, new
    return f"type of {kv.key.decode()} {old} -> {new}"


def array_length(rng, f: GGUFFile) -> str:
    kv = rng.choice([kv for kv in f.kvs if kv.vtype == ARRAY])
    items = kv.array_items()
    if rng.random() < 0.55 and items:
        items = items[:-1]
        what = "one item shorter"
    else:
        items = items + [items[-1] if kv.item_type != STRING else _unique_string(items)]
        what = "one item longer"
    index = f.kvs.index(kv)
    f.kvs[index] = kv.with_items(items)
    return f"{kv.key.decode()} {what}"


def _unique_string(items: list[bytes]) -> bytes:
    text = b"<extra_token>"
    return struct.pack("<Q", len(text)) + text


def hparam_value(rng, f: GGUFFile) -> str | None:
    arch = f.kv(b"general.architecture")
    prefix = arch.payload[8:] + b"." if arch is not None else b""
    kvs = [kv for kv in f.kvs if kv.vtype == 4 and (kv.key.startswith(prefix) or kv.key.startswith(b"tokenizer."))]
    if not kvs:
        return None
    kv = rng.choice(kvs)
    old = struct.unpack("<I", kv.payload)[0]
    new = rng.choice([0, 1, max(0, old - 1), old + 1, old * 2, old // 2, 7, 600, 100000])
    if new == old:
        new = old + 3
    kv.payload = struct.pack("<I", new)
    return f"{kv.key.decode()} {old} -> {new}"


def tensor_name(rng, f: GGUFFile) -> str:
    t = rng.choice(f.tensors)
    old = t.name
    if rng.random() < 0.3 and old.startswith(b"blk."):  # the layer number
        digits = old.split(b".")[1]
        t.name = b"blk." + str(rng.choice([d for d in range(10) if str(d).encode() != digits])).encode() + \
            old[4 + len(digits):]
    else:
        t.name = _flip(rng, old)
    return f"tensor {old.decode()} -> {t.name!r}"


def tensor_delete(rng, f: GGUFFile) -> str:
    chunks = f.chunks()
    index = rng.randrange(len(f.tensors))
    name = f.tensors[index].name
    del f.tensors[index], chunks[index]
    f.relayout(chunks)
    return f"deleted {name.decode()}"


def tensor_dims(rng, f: GGUFFile) -> str | None:
    t = rng.choice(f.tensors)
    roll = rng.random()
    if roll < 0.3 and len(t.dims) >= 2 and t.dims[0] != t.dims[1]:
        t.dims[0], t.dims[1] = t.dims[1], t.dims[0]
        return f"{t.name.decode()} dims swapped -> {t.dims}"
    if roll < 0.55 and len(t.dims) < 4:
        t.dims.append(1)
        return f"{t.name.decode()} extra dimension of 1 -> {t.dims}"
    if roll < 0.65 and len(t.dims) >= 2 and t.dims[-1] == 1:
        t.dims.pop()
        return f"{t.name.decode()} trailing 1 dropped -> {t.dims}"
    axis = rng.randrange(len(t.dims))
    old = t.dims[axis]
    t.dims[axis] = rng.choice([old * 2, max(1, old // 2), old + 1, 1])
    if t.dims[axis] == old:
        t.dims[axis] = old + 2
    return f"{t.name.decode()} dim {axis} {old} -> {t.dims[axis]}"


def tensor_type(rng, f: GGUFFile) -> str:
    t = rng.choice(f.tensors)
    old = t.ttype
    t.ttype = rng.choice([x for x in _TENSOR_TYPES if x != old])
    return f"{t.name.decode()} type {old} -> {t.ttype}"


def token_text(rng, f: GGUFFile) -> str | None:
    kv = f.kv(b"tokenizer.ggml.tokens")
    if kv is None:
        return None
    items = kv.array_items()
    index = rng.randrange(len(items))
    text = items[index][8:]
    if not text:
        return None
    items[index] = items[index][:8] + _flip(rng, text)
    f.kvs[f.kvs.index(kv)] = kv.with_items(items)
    return f"token {index} {text!r} -> {items[index][8:]!r}"


def token_duplicate(rng, f: GGUFFile) -> str | None:
    """One entry of the vocabulary overwritten with another's text (a repeated block in a damaged download)."""
    kv = f.kv(b"tokenizer.ggml.tokens")
    if kv is None:
        return None
    items = kv.array_items()
    source, target = rng.sample(range(len(items)), 2)
    items[target] = items[source]
    f.kvs[f.kvs.index(kv)] = kv.with_items(items)
    return f"token {target} := token {source} {items[source][8:]!r}"


def token_type_value(rng, f: GGUFFile) -> str | None:
    kv = f.kv(b"tokenizer.ggml.token_type")
    if kv is None or kv.item_type not in (4, 5):
        return None
    items = kv.array_items()
    index = rng.randrange(len(items))
    new = rng.choice([0, 1, 2, 3, 4, 5, 6, 6, 6, 99])
    items[index] = struct.pack("<i", new)
    f.kvs[f.kvs.index(kv)] = kv.with_items(items)
    return f"token_type[{index}] -> {new}"


def string_value(rng, f: GGUFFile) -> str | None:
    kvs = [kv for kv in f.kvs if kv.vtype == STRING and len(kv.payload) > 8]
    kv = rng.choice(kvs)
    text = kv.payload[8:]
    kv.payload = kv.payload[:8] + _flip(rng, text)
    return f"value of {kv.key.decode()} {text[:20]!r} -> {kv.payload[8:28]!r}"


_STRUCTURED = [(key_name, 14), (value_type, 8), (array_length, 8), (hparam_value, 10), (tensor_name, 14),
               (tensor_delete, 8), (tensor_dims, 12), (tensor_type, 8), (token_text, 5), (token_duplicate, 2),
               (token_type_value, 2), (string_value, 4)]


def mutate(rng: random.Random, pristine: bytes) -> tuple[str, bytes]:
    if rng.random() < 0.08:  # cut short: anywhere, or within the last bytes (a download that almost finished)
        cut = rng.randrange(len(pristine)) if rng.random() < 0.5 else len(pristine) - rng.randint(1, 64)
        return f"truncated at {cut} of {len(pristine)}", pristine[:cut]
    functions, weights = zip(*_STRUCTURED, strict=True)
    while True:
        f = GGUFFile.parse(pristine)
        label = rng.choices(functions, weights)[0](rng, f)
        if label is not None:
            return label, f.to_bytes()
