"""Finding long zero stretches in a file: the SHA-256 pass's scanner and the fast probes find the same runs,
exactly, wherever they fall relative to read blocks."""

from __future__ import annotations

import os
import random
import re
import sys

import pytest

from app.core.gguf.sha256 import cached_zero_runs, hash_and_scan, hash_stream
from app.core.gguf.zero_runs import MIN_RUN, MIN_TAIL, PIECE, ZeroRun, ZeroScanner, probe_zero_runs


def _reference_runs(data: bytes) -> list[ZeroRun]:
    """Every zero run by a plain search: >= MIN_RUN inside the file, >= MIN_TAIL at its end."""
    found = (ZeroRun(m.start(), m.end()) for m in re.finditer(rb"\x00+", data))
    return [r for r in found if r.length >= (MIN_TAIL if r.end == len(data) else MIN_RUN)]


@pytest.fixture
def holed(tmp_path):
    """7.3 MiB of non-zero bytes with zero runs at unaligned places: 1 MiB + 3, 2.5 MiB, a short one (1 MiB - 1,
    not reported), and a 200 KiB tail."""
    rng = random.Random(7)
    data = bytearray(rng.randbytes(7_654_321).replace(b"\0", b"\1"))
    for start, length in ((100_001, MIN_RUN + 3), (2_000_123, 2_621_440), (5_300_007, MIN_RUN - 1)):
        data[start:start + length] = bytes(length)
    data[-200_000:] = bytes(200_000)
    path = tmp_path / "holed.bin"
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("chunk", [PIECE, 1 << 20, 3 * PIECE, 8 << 20])
def test_the_scanner_finds_every_run_exactly_whatever_the_block_size(holed, chunk):
    scanner = ZeroScanner()
    hash_stream(holed, chunk_size=chunk, observe=scanner.feed)
    expected = _reference_runs(holed.read_bytes())
    assert [r.length for r in expected] == [MIN_RUN + 3, 2_621_440, 200_000]
    assert scanner.finish() == expected


def test_the_probes_find_the_same_runs(holed):
    runs, probes = probe_zero_runs(holed, 0, [])
    assert runs == _reference_runs(holed.read_bytes())
    assert probes >= os.path.getsize(holed) // MIN_RUN


def test_the_probes_read_without_pread_as_on_windows(holed, monkeypatch):
    """Windows has no os.pread: there the probes seek and read, and find the same runs."""
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.delattr(os, "pread")
    runs, _ = probe_zero_runs(holed, 0, [])
    assert runs == _reference_runs(holed.read_bytes())


def test_a_run_shorter_than_the_probe_spacing_between_probes_is_not_claimed(tmp_path):
    """The probes find what they hit; the full pass finds every run (the fast check says which it did)."""
    data = bytearray(b"\1" * (4 << 20))
    data[10:MIN_RUN // 2] = bytes(MIN_RUN // 2 - 10)
    path = tmp_path / "short.bin"
    path.write_bytes(bytes(data))
    assert probe_zero_runs(path, 0, [])[0] == []


def test_the_hash_pass_caches_its_runs_with_the_digest(holed):
    digest, runs = hash_and_scan(holed)
    assert runs == _reference_runs(holed.read_bytes())
    assert cached_zero_runs(holed) == runs
    assert hash_and_scan(holed, cancel=lambda: True) == (digest, runs)  # from the cache: no second read
