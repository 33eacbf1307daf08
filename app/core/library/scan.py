"""Find the GGUF files in the places :mod:`app.core.library.sources` names, and read each one's header.

Bounded: a few folder levels, a cap on files, symlinked folders not followed (a Hugging Face snapshot's file
symlinks are, to their blob). The checks are the cheap ones on the header (magic, version, data within the file,
tensor layout, types); the full validation runs when a model is opened.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.bounded_json import read_json
from app.core.gguf.errors import GGUFError
from app.core.gguf.shard_names import SPLIT_NAME
from app.core.library.sources import (
    APP_DOWNLOADS,
    APP_HF,
    APP_JAN,
    APP_LLAMA_CPP,
    APP_LM_STUDIO,
    APP_OLLAMA,
    APP_USER,
    HF,
    OLLAMA,
    Source,
    known_sources,
)
from app.core.problem import Status
from app.core.text import T, Text

logger = logging.getLogger(__name__)

MAX_DEPTH = 6  # folder levels below a source's folder
MAX_FILES = 2000  # files looked at in all
MAX_MANIFEST_BYTES = 1024 * 1024
OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
OLLAMA_DEFAULT_REGISTRY = "registry.ollama.ai"
PROJECTOR_ARCH = "clip"  # general.architecture of a vision projector (app.core.gguf.projector)

APP_NAMES: dict[str, Text] = {
    APP_OLLAMA: T("Ollama", "Ollama"),
    APP_LM_STUDIO: T("LM Studio", "LM Studio"),
    APP_JAN: T("Jan", "Jan"),
    APP_HF: T("Hugging Face cache", "Hugging Face 缓存"),
    APP_LLAMA_CPP: T("llama.cpp cache", "llama.cpp 缓存"),
    APP_USER: T("Your folder", "您的文件夹"),
    APP_DOWNLOADS: T("Downloaded by this app", "本应用下载的"),
}


@dataclass
class LocalModel:
    path: str  # what opening it opens (never copied)
    name: str  # Ollama: model:tag; Hugging Face: org/name/file; otherwise the file name
    app: str  # APP_* of the place it was found
    size: int  # bytes of this file (all parts of a split model)
    quant: str | None = None  # the file type from the header (Q4_K_M...), else the commonest tensor type
    architecture: str | None = None
    status: Status | None = None  # the cheap header checks; None when not inspected
    message: Text | None = None  # why it did not pass

    @property
    def app_name(self) -> Text:
        return APP_NAMES.get(self.app, T(self.app, self.app))

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "name": self.name, "app": self.app, "size_bytes": self.size,
                "quant": self.quant, "architecture": self.architecture,
                "checks": self.status.value if self.status is not None else None,
                "problem": self.message.render() if self.message is not None else None}


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _is_gguf_name(name: str) -> bool:
    if not name.lower().endswith(".gguf"):
        return False
    match = SPLIT_NAME.match(name)
    return match is None or int(match.group("no")) == 1  # a split model is listed once, by its first part


def _walk(root: Path, budget: list[int]) -> Iterator[Path]:
    """Every *.gguf below ``root`` (not in hidden folders, symlinked folders not followed), a few levels deep."""
    root_depth = len(root.parts)
    for folder, dirs, files in os.walk(root, onerror=lambda _e: None):
        depth = len(Path(folder).parts) - root_depth
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if depth < MAX_DEPTH else []
        for name in sorted(files):
            if _is_gguf_name(name):
                if budget[0] <= 0:
                    return
                budget[0] -= 1
                yield Path(folder) / name


def _tree(source: Source, budget: list[int]) -> list[LocalModel]:
    return [LocalModel(str(p), p.name, source.app, _size(p)) for p in _walk(source.path, budget)]


def _hf(source: Source, budget: list[int]) -> list[LocalModel]:
    """``models--org--name/snapshots/<revision>/**.gguf`` (symlinks to ``blobs/``); each blob once."""
    found = []
    for repo in sorted(source.path.glob("models--*")):
        repo_name = "/".join(repo.name.split("--")[1:])
        for path in _walk(repo / "snapshots", budget):
            relative = path.relative_to(repo / "snapshots").parts[1:]  # without the revision
            found.append(LocalModel(str(path), f"{repo_name}/{'/'.join(relative)}", source.app, _size(path)))
    return found


def _ollama_name(manifest: Path, manifests: Path) -> str:
    parts = manifest.relative_to(manifests).parts  # registry, namespace, model, tag
    *prefix, model, tag = parts
    if prefix[:2] == [OLLAMA_DEFAULT_REGISTRY, "library"]:
        prefix = []
    elif prefix[:1] == [OLLAMA_DEFAULT_REGISTRY]:
        prefix = prefix[1:]
    return "/".join([*prefix, model]) + f":{tag}"


def _ollama_blob(manifest: Path, blobs: Path) -> Path | None:
    try:
        data = read_json(manifest, max_bytes=MAX_MANIFEST_BYTES)  # a regular file only: a FIFO hung the scan
    except (OSError, ValueError):
        return None
    layers = data.get("layers") if isinstance(data, dict) else None
    for layer in layers if isinstance(layers, list) else []:
        if isinstance(layer, dict) and layer.get("mediaType") == OLLAMA_MODEL_LAYER:
            digest = layer.get("digest")
            if isinstance(digest, str) and ":" in digest:
                algo, _, hexdigest = digest.partition(":")
                if algo.isalnum() and hexdigest.isalnum():
                    return blobs / f"{algo}-{hexdigest}"
    return None


def _ollama(source: Source, budget: list[int]) -> list[LocalModel]:
    """Each manifest ``manifests/<registry>/<namespace>/<model>/<tag>`` names its model layer's blob, a plain GGUF."""
    manifests, blobs = source.path / "manifests", source.path / "blobs"
    found = []
    for folder, dirs, files in os.walk(manifests, onerror=lambda _e: None):
        dirs.sort()
        if len(Path(folder).relative_to(manifests).parts) != 3:
            continue
        for tag in sorted(files):
            if budget[0] <= 0:
                return found
            budget[0] -= 1
            manifest = Path(folder) / tag
            blob = _ollama_blob(manifest, blobs)
            if blob is not None and blob.is_file():
                found.append(LocalModel(str(blob), _ollama_name(manifest, manifests), source.app, _size(blob)))
    return found


_READERS: dict[str, Callable[[Source, list[int]], list[LocalModel]]] = {OLLAMA: _ollama, HF: _hf}


def inspect(model: LocalModel) -> LocalModel:
    """Fill quant type, architecture and the cheap header checks (the file's header only, never its data)."""
    from app.core.gguf.checks import offsets_check, quant_types_check, sizes_check, truncation_check
    from app.core.gguf.quant_types import type_name
    from app.core.gguf.reader import read_model_info

    try:
        info = read_model_info(model.path)
    except GGUFError as exc:
        model.status, model.message = Status.ERROR, exc.message
        return model
    except (OSError, ValueError, MemoryError) as exc:  # the reader's own errors are GGUFError; this is a guard
        logger.info("reading %s failed: %s", model.path, type(exc).__name__)
        model.status, model.message = Status.ERROR, T("The file cannot be read.", "无法读取该文件。")
        return model
    model.architecture = info.architecture
    model.size = info.total_file_size or model.size
    model.quant = info.file_type_name or _commonest_type(info, type_name)
    checks = [truncation_check(info), offsets_check(info), sizes_check(info), quant_types_check(info, None)]
    failed = [c for c in checks if c.status is Status.ERROR]
    model.status = Status.ERROR if failed else Status.OK
    model.message = failed[0].message if failed else None
    return model


def _commonest_type(info, type_name) -> str | None:
    counts: dict[int, int] = {}
    for tensor in info.tensors:
        if tensor.n_bytes:
            counts[tensor.type_id] = counts.get(tensor.type_id, 0) + tensor.n_bytes
    return type_name(max(counts, key=lambda type_id: counts[type_id])) if counts else None


def find_local_models(sources: list[Source] | None = None, *, check: bool = True,
                      cancel: Callable[[], bool] | None = None, **source_options: Any) -> list[LocalModel]:
    """The GGUF files in ``sources`` (default: :func:`known_sources` with ``source_options``: env, home,
    extra_folders, platform), each once, header read and checked when ``check``. Missing folders add nothing."""
    sources = known_sources(**source_options) if sources is None else sources
    budget = [MAX_FILES]
    models: list[LocalModel] = []
    seen: set[str] = set()
    for source in sources:
        if not source.path.is_dir():
            continue
        for model in _READERS.get(source.kind, _tree)(source, budget):
            key = os.path.normcase(os.path.realpath(model.path))
            if key in seen:
                continue
            seen.add(key)
            if cancel is not None and cancel():
                return models
            if check:
                model = inspect(model)
                if model.architecture == PROJECTOR_ARCH:
                    continue  # a vision projector (mmproj) is no model to open; it is found next to its model
            models.append(model)
    return models
