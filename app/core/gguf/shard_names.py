"""Split model names: ``name-00001-of-00003.gguf``. Only the names, so the reader (which merges the shards) and the
split checks (which read each shard's header) both build on this without importing each other both ways."""

from __future__ import annotations

import re
from pathlib import Path

SPLIT_NAME = re.compile(r"^(?P<prefix>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf$", re.IGNORECASE)
MAX_SHARDS = 9999


def shard_paths(path: Path, count: int | None = None) -> list[Path] | None:
    """Every shard path of the split ``path`` belongs to (in order), or None if it is not a split name."""
    match = SPLIT_NAME.match(path.name)
    if not match:
        return None
    count = count or int(match.group("count"))
    if not 1 <= count <= MAX_SHARDS:
        return None
    prefix = match.group("prefix")
    return [path.with_name(f"{prefix}-{i:05d}-of-{count:05d}.gguf") for i in range(1, count + 1)]
