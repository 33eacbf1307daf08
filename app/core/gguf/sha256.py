"""Streamed SHA-256 of large model files, cached by (path, size, mtime) so a second check is instant.

Reading and hashing overlap: the main thread reads the next block while a worker hashes the
previous one (hashlib releases the GIL on large buffers), two reused buffers, no per-block allocation.
The same pass finds the file's long zero runs (``zero_runs.ZeroScanner``, a byte comparison per 64 KiB
while the worker hashes), which are cached with the digest.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from app.core.atomic import write_json_atomic
from app.core.bounded_json import read_json
from app.core.gguf.zero_runs import ZeroRun, ZeroScanner
from app.core.paths import cache_dir
from app.core.problem import UserError
from app.core.text import T

CHUNK = 8 << 20
_HEX64 = re.compile(r"\b([0-9a-fA-F]{64})\b")

ProgressFn = Callable[[int, int], None]  # (bytes done, bytes total)
CancelFn = Callable[[], bool]
ObserveFn = Callable[[bytearray, int], None]  # (buffer, bytes in it): each block in file order


@dataclass
class HashCancelled(UserError):
    """The user stopped a checksum run."""


def _cancelled() -> HashCancelled:
    return HashCancelled(T("The checksum was cancelled.", "校验已取消。"), None)


def _cache_file() -> Path:
    return cache_dir() / "sha256-cache.json"


def _load_cache() -> dict:
    try:
        data = read_json(_cache_file())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _cache_key(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return str(path.resolve()), st.st_size, st.st_mtime_ns


def _cached_entry(path: str | os.PathLike[str]) -> dict | None:
    try:
        key, size, mtime_ns = _cache_key(Path(path))
    except OSError:
        return None
    entry = _load_cache().get(key)
    if isinstance(entry, dict) and entry.get("size") == size and entry.get("mtime_ns") == mtime_ns:
        return entry
    return None


def cached_sha256(path: str | os.PathLike[str]) -> str | None:
    """The digest stored for this file if its size and modification time are unchanged."""
    digest = (_cached_entry(path) or {}).get("sha256")
    return digest if isinstance(digest, str) else None


def cached_zero_runs(path: str | os.PathLike[str]) -> list[ZeroRun] | None:
    """The zero runs the last full read of this unchanged file found; None when no full read is on record."""
    runs = (_cached_entry(path) or {}).get("zero_runs")
    if not isinstance(runs, list):
        return None
    try:
        return [ZeroRun(int(start), int(end)) for start, end in runs]
    except (TypeError, ValueError):
        return None


def _store(key: str, size: int, mtime_ns: int, digest: str, zero_runs: list[ZeroRun] | None = None) -> None:
    cache = _load_cache()
    cache[key] = {"size": size, "mtime_ns": mtime_ns, "sha256": digest}
    if zero_runs is not None:
        cache[key]["zero_runs"] = [run.to_list() for run in zero_runs]
    try:
        write_json_atomic(_cache_file(), cache)
    except OSError:
        pass  # a cache that cannot be written only costs time next run


def remember_sha256(path: str | os.PathLike[str], digest: str) -> None:
    """Record a digest computed while the file was written (e.g. streamed out of an archive): the next
    ``file_sha256``/``cached_sha256`` of the unchanged file is then instant, without reading it again."""
    try:
        key, size, mtime_ns = _cache_key(Path(path))
    except OSError:
        return
    _store(key, size, mtime_ns, digest.lower())


def hash_stream(path: str | os.PathLike[str], progress: ProgressFn | None = None,
                cancel: CancelFn | None = None, chunk_size: int = CHUNK, observe: ObserveFn | None = None) -> str:
    """SHA-256 hex digest of a file, uncached. Raises HashCancelled when ``cancel()`` turns true.
    ``observe(buffer, n)`` sees each block while the previous one is hashed."""
    digest = hashlib.sha256()
    buffers = [bytearray(chunk_size), bytearray(chunk_size)]
    with open(path, "rb", buffering=0) as stream, ThreadPoolExecutor(1, "sha256") as pool:
        total = os.fstat(stream.fileno()).st_size
        if sys.platform != "win32" and hasattr(os, "posix_fadvise"):  # not on Windows nor macOS
            os.posix_fadvise(stream.fileno(), 0, 0, os.POSIX_FADV_SEQUENTIAL)
        pending: Future | None = None
        done, which = 0, 0
        while True:
            if cancel is not None and cancel():
                if pending is not None:
                    pending.result()
                raise _cancelled()
            buffer = buffers[which]
            n = stream.readinto(buffer)  # overlaps with the hash of the other buffer
            if n and observe is not None:
                observe(buffer, n)
            if pending is not None:
                pending.result()
            if not n:
                break
            pending = pool.submit(digest.update, memoryview(buffer)[:n])
            done += n
            which ^= 1
            if progress is not None:
                progress(done, total)
    return digest.hexdigest()


def file_sha256(path: str | os.PathLike[str], progress: ProgressFn | None = None,
                cancel: CancelFn | None = None, use_cache: bool = True) -> str:
    """SHA-256 of ``path``, from the cache when the file is unchanged since it was last hashed."""
    return hash_and_scan(path, progress, cancel, use_cache)[0]


def hash_and_scan(path: str | os.PathLike[str], progress: ProgressFn | None = None,
                  cancel: CancelFn | None = None, use_cache: bool = True) -> tuple[str, list[ZeroRun] | None]:
    """(SHA-256 of ``path``, its zero runs of at least ``zero_runs.MIN_RUN`` bytes), from the cache when the
    file is unchanged since it was last hashed; the runs are None when the cached digest came without a full
    read (``remember_sha256``)."""
    file = Path(path)
    key, size, mtime_ns = _cache_key(file)
    if use_cache:
        hit = cached_sha256(file)
        if hit:
            if progress is not None:
                progress(size, size)
            return hit, cached_zero_runs(file)
    scanner = ZeroScanner()
    digest = hash_stream(file, progress, cancel, observe=scanner.feed)
    runs = scanner.finish()
    if _cache_key(file) == (key, size, mtime_ns):  # not modified while we hashed it
        _store(key, size, mtime_ns, digest, runs)
    return digest, runs


def _digest_for_name(text: str, name: str | None) -> str | None:
    for line in text.splitlines():
        parts = line.strip().split(maxsplit=1)
        if not parts or not _HEX64.fullmatch(parts[0]):
            continue
        listed = parts[1].lstrip("*").strip() if len(parts) > 1 else None
        if name is None or listed is None or Path(listed).name == name:
            return parts[0].lower()
    return None


def expected_sha256_for(path: str | os.PathLike[str]) -> tuple[str, str] | None:
    """(digest, source file) from a sibling ``<file>.sha256`` or a ``SHA256SUMS`` in the same folder."""
    file = Path(path)
    candidates = [(file.with_name(file.name + ".sha256"), None)]
    candidates += [(file.with_name(n), file.name) for n in ("SHA256SUMS", "SHA256SUMS.txt", "sha256sums.txt")]
    for candidate, name in candidates:
        try:
            if not candidate.is_file() or candidate.stat().st_size > 1 << 20:
                continue
            text = candidate.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        digest = _digest_for_name(text, name)
        if digest:
            return digest, str(candidate)
    return None


def normalize_digest(value: str) -> str | None:
    """A user-typed digest ('SHA256:ABC…', with spaces) as 64 lowercase hex chars, or None."""
    cleaned = value.strip().lower().removeprefix("sha256:").replace(" ", "")
    return cleaned if re.fullmatch(r"[0-9a-f]{64}", cleaned) else None
