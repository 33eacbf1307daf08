"""Where a file holds long stretches of zero bytes: the trace an interrupted download leaves.

Browsers and aria2 create the whole file first and fill it as data arrives, so a download that stops early
leaves a file of the right size whose missing parts read as zeros: a zero tail, or zero holes where
segments never arrived. llama.cpp loads such a file and answers nonsense.

Two ways to find the stretches (``ZeroRun``, at least ``MIN_RUN`` bytes, or ``MIN_TAIL`` at the end of the file):
- ``ZeroScanner`` is fed the file in order by the SHA-256 pass (which reads every byte anyway) and finds
  every run exactly;
- ``probe_zero_runs`` reads a few KiB at the end of each tensor and at regular places, and measures the run
  around each probe that is all zeros: fast, and certain to hit every run longer than the probe spacing.
Whether a run is damage or a legitimate zero part of the model is ``zero_layout``'s question.
"""

from __future__ import annotations

import errno
import logging
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass

logger = logging.getLogger(__name__)

MIN_RUN = 1 << 20  # shorter zero stretches are left alone (padding, zero biases, zero blocks)
MIN_TAIL = 128 << 10  # a zero stretch that reaches the end of the file counts from this length
PIECE = 64 << 10  # a run of MIN_RUN bytes always holds 14 whole pieces, so whole pieces are enough to find it
PROBE = 4 << 10
MAX_REGULAR_PROBES = 4096
STEP = 1 << 20  # how far a run is followed per read
_ZERO = bytes(PIECE)


@dataclass(frozen=True)
class ZeroRun:
    """Bytes ``start`` up to ``end`` (exclusive) of the file are all zero."""

    start: int
    end: int

    @property
    def length(self) -> int:
        return self.end - self.start

    def to_list(self) -> list[int]:
        return [self.start, self.end]


def _trailing_zeros(data: bytes) -> int:
    return len(data) - len(data.rstrip(b"\0"))


def _leading_zeros(data: bytes) -> int:
    return len(data) - len(data.lstrip(b"\0"))


class ZeroScanner:
    """Finds every zero run of at least ``min_run`` bytes in data fed in file order (``feed``, then ``finish``)."""

    def __init__(self, min_run: int = MIN_RUN, min_tail: int = MIN_TAIL) -> None:
        self.min_run, self.min_tail = min_run, min_tail
        self.runs: list[ZeroRun] = []
        self._pos = 0  # file offset of the next byte fed
        self._start: int | None = None  # start of the open run
        self._tail = 0  # zero bytes at the end of what was fed, when no run is open

    def feed(self, buffer: bytes | bytearray, n: int | None = None) -> None:
        """The next ``n`` bytes of the file (default: all of ``buffer``); ``buffer`` is only read during the call."""
        n = len(buffer) if n is None else n
        for k in range(0, n, PIECE):
            size = min(PIECE, n - k)
            if buffer.startswith(_ZERO[:size], k):
                if self._start is None:
                    before = self._tail if k == 0 else _trailing_zeros(bytes(buffer[k - PIECE:k]))
                    self._start = self._pos + k - before
            elif self._start is not None:
                self._close(self._start, self._pos + k + _leading_zeros(bytes(buffer[k:k + size])))
        if self._start is None and n:
            self._tail = _trailing_zeros(bytes(buffer[max(0, n - PIECE):n]))
        self._pos += n

    def finish(self) -> list[ZeroRun]:
        if self._start is not None:
            self._close(self._start, self._pos, self.min_tail)
        return self.runs

    def _close(self, start: int, end: int, min_length: int | None = None) -> None:
        if end - start >= (self.min_run if min_length is None else min_length):
            self.runs.append(ZeroRun(start, end))
        self._start, self._tail = None, 0


# --- the fast probes --------------------------------------------------------------------------------------


def probe_offsets(data_start: int, file_size: int, tensor_ends: Iterable[int]) -> list[int]:
    """Where the fast check reads ``PROBE`` bytes: the end of each tensor, the end of the file, and regular
    places ``spacing`` apart. The spacing is at most ``MIN_RUN - PROBE`` up to 4 GiB of data, so every run of
    ``MIN_RUN`` bytes there holds a whole probe; bigger files get ``MAX_REGULAR_PROBES`` probes."""
    span = max(0, file_size - data_start)
    spacing = max(MIN_RUN - PROBE, -(-span // MAX_REGULAR_PROBES))
    points = {max(data_start, end - PROBE) for end in tensor_ends if data_start < end <= file_size}
    points.update(range(data_start, file_size, spacing))
    points.add(max(data_start, file_size - PROBE))
    return sorted(p for p in points if p < file_size)


def _read(fd: int, offset: int, n: int) -> bytes:
    if sys.platform == "win32":  # no pread there: seek, then read (each descriptor here has one reader)
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, n)
    return os.pread(fd, n, offset)


def _run_start(fd: int, zero_at: int, floor: int) -> int:
    """The first byte of the zero run that holds ``zero_at`` (not before ``floor``)."""
    end = zero_at
    while end > floor:
        start = max(floor, end - STEP)
        data = _read(fd, start, end - start)
        kept = len(data.rstrip(b"\0"))
        if kept:
            return start + kept
        end = start
    return floor


def _next_data(fd: int, offset: int, ceiling: int) -> int:
    """The first byte at or after ``offset`` that is not in a hole of a sparse file (``ceiling`` when only holes
    follow); ``offset`` itself where the system cannot tell."""
    seek_data = getattr(os, "SEEK_DATA", None)
    if seek_data is None:
        return offset
    try:
        return min(os.lseek(fd, offset, seek_data), ceiling)
    except OSError as error:
        return ceiling if error.errno == errno.ENXIO else offset  # ENXIO: no data after offset


def _run_end(fd: int, zero_at: int, ceiling: int) -> int:
    """The byte after the zero run that holds ``zero_at`` (at most ``ceiling``)."""
    start = zero_at
    while start < ceiling:
        start = _next_data(fd, start, ceiling)  # a hole reads as zeros: skipped, not read (a sparse 1 TiB tail)
        if start >= ceiling:
            return ceiling
        data = _read(fd, start, min(STEP, ceiling - start))
        if not data:
            return start
        zeros = _leading_zeros(data)
        if zeros < len(data):
            return start + zeros
        start += len(data)
    return ceiling


def probe_zero_runs(path: str | os.PathLike[str], data_start: int, tensor_ends: Iterable[int],
                    min_run: int = MIN_RUN, min_tail: int = MIN_TAIL) -> tuple[list[ZeroRun], int]:
    """(the zero runs of at least ``min_run`` bytes around the probes, or ``min_tail`` bytes at the end of the
    file, the number of probes read).

    ``data_start`` is where the tensor data begins: the metadata before it is never zero for long.
    Raises OSError when the file cannot be read."""
    runs: list[ZeroRun] = []
    with open(path, "rb") as stream:
        fd = stream.fileno()
        size = os.fstat(fd).st_size
        probes = probe_offsets(data_start, size, tensor_ends)
        for offset in probes:
            if runs and runs[-1].start <= offset < runs[-1].end:
                continue  # inside the run just measured
            data = _read(fd, offset, PROBE)
            if not data or data.count(0) != len(data):
                continue
            run = ZeroRun(_run_start(fd, offset, data_start), _run_end(fd, offset + len(data), size))
            if run.length >= (min_tail if run.end == size else min_run):
                runs.append(run)
    return runs, len(probes)
