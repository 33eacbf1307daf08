"""The SHA-256 a file's origin already names, offline: no published checksum needed.

- Hugging Face's download cache keeps each large (LFS) file under ``models--org--name/blobs/<sha256>`` and
  the file one opens (``snapshots/<revision>/name.gguf``) is a link to it; the blob's name is the SHA-256
  the Hub published for the file. (Small files are named by their git SHA-1, 40 characters: not used.)
- Ollama keeps each layer as ``blobs/sha256-<hex>``, named after its content's SHA-256.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from app.core.text import T, Text

_HEX64 = re.compile(r"[0-9a-f]{64}")
_OLLAMA = re.compile(r"sha256[-:]([0-9a-f]{64})")


def origin_sha256(path: str | os.PathLike[str]) -> tuple[str, Text] | None:
    """(the digest, where it comes from as a phrase) when the file lives in a store that names it by its
    SHA-256; None otherwise or when the path cannot be resolved."""
    try:
        target = Path(path).resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if target.parent.name != "blobs":
        return None
    name = target.name.lower()
    if _HEX64.fullmatch(name) and target.parent.parent.name.startswith("models--"):
        return name, T("the name Hugging Face's download cache stores it under",
                       "Hugging Face 下载缓存存放它时使用的名称")
    match = _OLLAMA.fullmatch(name)
    if match:
        return match.group(1), T("the name Ollama stores it under", "Ollama 存放它时使用的名称")
    return None
