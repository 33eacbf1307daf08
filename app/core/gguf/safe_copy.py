"""Copy a model to a safe folder (plain ASCII path, local disk): hard link when possible, else a
streamed copy to a temporary name that is renamed at the end, so a half copy never looks complete."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from app.core.gguf.sha256 import CancelFn, HashCancelled, ProgressFn
from app.core.gguf.shard_names import shard_paths
from app.core.text import T

CHUNK = 8 << 20


def safe_name(name: str) -> str:
    """ASCII-only file name without spaces; keeps the -0000N-of-0000M.gguf suffix intact."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name.encode("ascii", "ignore").decode()).strip("._")
    if not cleaned.lower().endswith(".gguf"):
        cleaned = (cleaned or "model") + ".gguf"
    return cleaned if len(cleaned) > len(".gguf") else "model.gguf"


def _same_file(a: Path, b: Path) -> bool:
    try:
        sa, sb = a.stat(), b.stat()
    except OSError:
        return False
    return sa.st_size == sb.st_size and int(sa.st_mtime) == int(sb.st_mtime)


def _stream_copy(src: Path, dest: Path, progress: ProgressFn | None, cancel: CancelFn | None,
                 done: int, total: int) -> int:
    tmp = dest.with_name(f".{dest.name}.partial")
    try:
        with open(src, "rb") as fin, open(tmp, "wb") as fout:
            while chunk := fin.read(CHUNK):
                if cancel is not None and cancel():
                    raise HashCancelled(T("The copy was cancelled.", "复制已取消。"), None)
                fout.write(chunk)
                done += len(chunk)
                if progress is not None:
                    progress(done, total)
            fout.flush()
            os.fsync(fout.fileno())
        shutil.copystat(src, tmp)
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return done


def _copy_one(src: Path, dest: Path, progress: ProgressFn | None, cancel: CancelFn | None,
              done: int, total: int) -> int:
    size = src.stat().st_size
    if _same_file(src, dest):
        return done + size
    try:
        dest.unlink(missing_ok=True)
        os.link(src, dest)  # same filesystem: instant, no extra disk space
        if progress is not None:
            progress(done + size, total)
        return done + size
    except OSError:
        return _stream_copy(src, dest, progress, cancel, done, total)


def safe_copy_for_path_problem(path: str | os.PathLike[str], dest_dir: str | os.PathLike[str],
                               progress: ProgressFn | None = None, cancel: CancelFn | None = None) -> Path:
    """Copy (or hard-link) ``path`` into ``dest_dir`` under a safe name and return the new path.

    For a split model every present shard is copied and the copy of ``path``'s first shard is returned.
    Raises HashCancelled when ``cancel()`` turns true, OSError when the disk refuses.
    """
    src = Path(path)
    target_dir = Path(dest_dir)
    target_dir.mkdir(parents=True, exist_ok=True)
    sources = [p for p in (shard_paths(src) or [src]) if p.is_file()]
    total = sum(p.stat().st_size for p in sources)
    done = 0
    copies = []
    for source in sources:
        dest = target_dir / safe_name(source.name)
        done = _copy_one(source, dest, progress, cancel, done, total)
        copies.append(dest)
    return copies[0]
