"""Vision projectors (mmproj): the second GGUF a multimodal model needs to read images, found next to the model.

convert_hf_to_gguf.py writes a projector with ``general.architecture = "clip"`` (gguf-py's MODEL_ARCH.MMPROJ)
and ``general.type = "mmproj"``, and names it ``mmproj-<model>.gguf``; downloads also carry names such as
``mmproj-F16.gguf`` or ``<model>-mmproj-f16.gguf``. Only files whose name contains "mmproj" are read, and only
their headers (the bounded reader, no tensor data), so looking costs milliseconds; the model itself is never a
candidate, and a file that cannot be read or is no projector is passed over.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

from app.core.gguf.errors import GGUFError
from app.core.gguf.model_info import ModelInfo
from app.core.gguf.reader import read_model_info

logger = logging.getLogger(__name__)

MAX_CANDIDATES = 32  # a folder with more mmproj files than this is not one model's folder; the rest are skipped
_SPLIT = re.compile(r"[-_.\s]+")
# Name parts that say nothing about which model a file belongs to: precisions and quant types (F16, Q4_K_M ->
# q4 k m), and the words every projector carries.
_NEUTRAL = re.compile(r"^(mmproj|gguf|model|vision|b?f16|f32|i?q\d+|k|m|s|l|xs|xxs|nl|0|1)$")
# Among equally good names: F16 first (what converters default to and every backend runs), then others.
_PRECISION_ORDER = ("f16", "bf16", "q8_0", "f32")


def is_projector(info: ModelInfo) -> bool:
    """Whether a read GGUF is a multimodal projector rather than a language model."""
    arch = (info.architecture or "").split("\0", 1)[0]
    return arch == "clip" or info.metadata.get("general.type") == "mmproj"


def _name_tokens(name: str) -> set[str]:
    stem = name[:-5] if name.lower().endswith(".gguf") else name
    return {t for t in _SPLIT.split(stem.lower()) if t and not _NEUTRAL.match(t)}


def _precision_rank(name: str) -> int:
    lowered = name.lower()
    for rank, precision in enumerate(_PRECISION_ORDER):
        if re.search(rf"(^|[-_.]){precision}([-_.]|$)", lowered):
            return rank
    return len(_PRECISION_ORDER)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return a.resolve() == b.resolve()


def projector_candidates(model_path: str | os.PathLike[str]) -> list[Path]:
    """The ``*mmproj*.gguf`` files in the model's folder (by name only, the model excluded), sorted by name."""
    model = Path(model_path)
    try:
        entries = sorted(model.parent.iterdir(), key=lambda p: p.name)
    except OSError:
        logger.warning("cannot list %s to look for a vision projector", model.parent, exc_info=True)
        return []
    found = []
    for entry in entries:
        if "mmproj" not in entry.name.lower() or not entry.name.lower().endswith(".gguf"):
            continue
        if entry.name == model.name or _same_file(entry, model) or not entry.is_file():
            continue
        found.append(entry)
        if len(found) >= MAX_CANDIDATES:
            logger.info("more than %d mmproj files next to %s; the rest are not read", MAX_CANDIDATES, model)
            break
    return found


def read_projector(path: str | os.PathLike[str]) -> ModelInfo | None:
    """The header of ``path`` when it is a readable projector; None (logged) otherwise."""
    try:
        info = read_model_info(path)
    except (GGUFError, OSError):
        logger.info("%s is not a readable GGUF; not used as a vision projector", path, exc_info=True)
        return None
    if not is_projector(info):
        logger.info("%s is named like a projector but is a %r model; not used", path, info.architecture)
        return None
    return info


def find_projector(model_path: str | os.PathLike[str]) -> Path | None:
    """The vision projector next to ``model_path``, or None.

    Several: the one whose name shares most words with the model's name (``mmproj-gemma-3-4b-it-f16.gguf`` for
    ``gemma-3-4b-it-Q4_K_M.gguf``), F16 before other precisions, then by name. A projector of another model in
    the same folder is told apart only by its name: llama-server refuses a projector whose width does not match.
    """
    model_tokens = _name_tokens(Path(model_path).name)
    best: tuple[int, int, str] | None = None
    chosen: Path | None = None
    for candidate in projector_candidates(model_path):
        if read_projector(candidate) is None:
            continue
        key = (-len(model_tokens & _name_tokens(candidate.name)), _precision_rank(candidate.name), candidate.name)
        if best is None or key < best:
            best, chosen = key, candidate
    return chosen
