"""A repository's GGUF files as a downloader needs them: each model (one file, or the shards of a split model) with
its quantization, size, every part's URL, size and published SHA-256, and the vision projectors beside it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from app.core.gguf.shard_names import SPLIT_NAME

# Quantization names as they appear in file names (longest first, so Q4_K_M wins over Q4_K): llama.cpp's file types
# and tensor types, plus the unquantized F16/BF16/F32.
_QUANT = re.compile(
    r"(?<![A-Za-z0-9])(?P<q>(?:UD-)?(?:IQ[1-4]_(?:XXS|XS|S|M|NL)|Q[2-8]_K(?:_[SML]|_XL)?|Q[4-8]_[01]|Q[2-8]_K|"
    r"TQ[12]_0|MXFP4(?:_MOE)?|NVFP4|BF16|F16|F32|Q[1-8]_0))(?![A-Za-z0-9])", re.IGNORECASE)
_PROJECTOR = re.compile(r"mmproj", re.IGNORECASE)


def quant_from_name(name: str) -> str | None:
    """"Qwen2.5-7B-Instruct-Q4_K_M.gguf" -> "Q4_K_M"; None when the name carries none."""
    found = _QUANT.findall(name.rsplit("/", 1)[-1])
    return found[-1].upper() if found else None


@dataclass(frozen=True)
class HubFile:
    """One file in the repository: its path, size and SHA-256 as the Hub publishes them (LFS metadata; None when the
    Hub gave none), and the URL that serves it (supports HTTP Range)."""

    path: str
    size: int | None
    sha256: str | None
    url: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "size": self.size, "sha256": self.sha256, "url": self.url}


@dataclass(frozen=True)
class HubModel:
    """One model to download: a single GGUF, or every shard of a split one (in order, shard 1 first)."""

    repo: str
    name: str  # the file name, or the split model's common prefix + ".gguf"
    quant: str | None
    parts: tuple[HubFile, ...]
    expected_parts: int = 1  # a split model's shard count from its names; more than len(parts) = some are missing

    @property
    def size(self) -> int | None:
        sizes = [p.size for p in self.parts]
        return None if any(s is None for s in sizes) else sum(s for s in sizes if s is not None)

    @property
    def is_split(self) -> bool:
        return self.expected_parts > 1

    @property
    def complete(self) -> bool:
        return len(self.parts) == self.expected_parts

    def to_dict(self) -> dict[str, Any]:
        return {"repo": self.repo, "name": self.name, "quant": self.quant, "size": self.size,
                "split": self.is_split, "complete": self.complete, "expected_parts": self.expected_parts,
                "parts": [p.to_dict() for p in self.parts]}


@dataclass(frozen=True)
class RepoListing:
    repo: str
    revision: str | None  # the commit the listing describes (the Hub's sha), so every part comes from one commit
    gated: bool | str | None
    models: tuple[HubModel, ...]
    projectors: tuple[HubFile, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {"repo": self.repo, "revision": self.revision, "gated": self.gated,
                "models": [m.to_dict() for m in self.models],
                "projectors": [p.to_dict() for p in self.projectors]}


def group_models(repo: str, files: list[HubFile]) -> tuple[tuple[HubModel, ...], tuple[HubFile, ...]]:
    """(models, projectors) of a repository's ``.gguf`` files: shards named ``x-00001-of-00003.gguf`` become one
    model; files with "mmproj" in their name are projectors. Largest models first."""
    models: list[HubModel] = []
    projectors: list[HubFile] = []
    splits: dict[tuple[str, int], list[tuple[int, HubFile]]] = {}
    for f in files:
        base = f.path.rsplit("/", 1)[-1]
        if not base.lower().endswith(".gguf"):
            continue
        if _PROJECTOR.search(base):
            projectors.append(f)
            continue
        match = SPLIT_NAME.match(base)
        if match:
            folder = f.path[: len(f.path) - len(base)]
            splits.setdefault((folder + match.group("prefix"), int(match.group("count"))), []).append(
                (int(match.group("no")), f))
            continue
        models.append(HubModel(repo, f.path, quant_from_name(f.path), (f,)))
    for (prefix, count), parts in splits.items():
        ordered = tuple(f for _, f in sorted(parts, key=lambda p: p[0]))
        models.append(HubModel(repo, prefix + ".gguf", quant_from_name(prefix), ordered, expected_parts=count))
    models.sort(key=lambda m: (-(m.size or 0), m.name))
    return tuple(models), tuple(projectors)
