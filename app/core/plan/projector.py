"""What a vision projector (mmproj) costs: its weights, and the compute buffer for encoding one image.

llama-server (b11434) loads the projector into one backend buffer (read, not memory-mapped: all of it is resident),
on the GPU whenever a GPU backend exists (``--mmproj-offload`` is the default, even with ``-ngl 0``; the app passes
``--no-mmproj-offload`` when no layer goes to the GPU, see app/core/launch/backends.py), else in RAM. At load it
prints ``[mtmd] estimated worst-case memory usage of mmproj is X MiB`` = weights (``load_hparams: model size``) +
the image compute buffer (``reserve_compute_meta: ... compute buffer size``), and adds X to ``--fit``'s target.

The compute buffer follows the ViT's largest live set, measured on generated ``mlp`` (LLaVA) projectors
(tests/unit/core/plan/test_projector.py): the raw image in f32, plus per image position the feed-forward width
and three model widths; without flash attention the attention scores (heads x positions^2) plus four model widths
per position when that is larger. The image is ``image_size`` square (what mtmd warms up with); projector types
that resize to other sizes (dynamic resolution) are counted at that size too, an estimate only.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.gguf.projector import find_projector, read_projector
from app.core.launch.config import BACKEND_LLAMA_SERVER
from app.core.problem import Check, Status
from app.core.text import T, Text, human_bytes

F32 = 4


@dataclass(frozen=True)
class ProjectorMemory:
    weight_bytes: int
    compute_bytes: int

    @property
    def total_bytes(self) -> int:
        return self.weight_bytes + self.compute_bytes


@functools.lru_cache(maxsize=16)
def _loaded_projector(path: str, mtime_ns: int, size: int, flash_attn: bool | None) -> int:
    info = read_projector(path)
    return projector_memory(info, flash_attn).total_bytes if info is not None else 0


def config_projector_bytes(config: Any) -> int:
    """What the config's projector (``LaunchConfig.mmproj``) adds to the load, where the engine loads one
    (llama-server); 0 otherwise. Read once per file version: a plan's search asks many times."""
    if not config.mmproj or config.backend != BACKEND_LLAMA_SERVER:
        return 0
    try:
        stat = os.stat(config.mmproj)
    except OSError:
        return 0  # a projector that went away: the server will say so at the start
    return _loaded_projector(str(config.mmproj), stat.st_mtime_ns, stat.st_size, config.flash_attn)


def projector_bytes(projector_info: Any) -> int:
    """The projector's tensor bytes (a ModelInfo of the mmproj file): what llama.cpp loads, all of it resident."""
    return int(projector_info.tensor_data_bytes)


def _u(metadata: dict[str, Any], key: str) -> int:
    value = metadata.get(key)
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def projector_compute_bytes(projector_info: Any, flash_attn: bool | None = None) -> int:
    """The compute buffer for encoding one image; 0 when the file has no vision encoder sizes (audio only).

    ``flash_attn`` None (the engine decides) counts the larger of the two, so the plan stays on the safe side.
    """
    meta = projector_info.metadata
    image, patch = _u(meta, "clip.vision.image_size"), _u(meta, "clip.vision.patch_size")
    n_embd, n_ff = _u(meta, "clip.vision.embedding_length"), _u(meta, "clip.vision.feed_forward_length")
    n_head = _u(meta, "clip.vision.attention.head_count")
    if not (image and patch and n_embd):
        return 0
    n_pos = (image // patch) ** 2 + (1 if any(t.name == "v.class_embd" for t in projector_info.tensors) else 0)
    raw_image = image * image * 3 * F32
    with_flash = n_pos * (n_ff + 3 * n_embd) * F32
    without_flash = n_pos * (n_head * n_pos + 4 * n_embd) * F32
    live = with_flash if flash_attn else max(with_flash, without_flash)
    return raw_image + live


def projector_memory(projector_info: Any, flash_attn: bool | None = None) -> ProjectorMemory:
    """Weights and image compute buffer of a projector; both go where llama-server puts the projector."""
    return ProjectorMemory(projector_bytes(projector_info), projector_compute_bytes(projector_info, flash_attn))


@dataclass(frozen=True)
class FoundProjector:
    """A projector found next to a model, what it costs, and whether the chosen engine loads it."""

    path: str
    memory: ProjectorMemory
    used: bool  # llama-server loads it (LaunchConfig.mmproj); the built-in engine does not

    def sentence(self) -> Text:
        name, size = Path(self.path).name, human_bytes(self.memory.total_bytes)
        if self.used:
            return T("Vision projector found next to the model: {name} ({size}); llama-server loads it with the "
                     "model so it can read pictures.",
                     "在模型旁找到视觉投影文件：{name}（{size}）；llama-server 会与模型一起加载它，以便识别图片。",
                     name=name, size=size)
        return T("Vision projector found next to the model: {name} ({size}). The built-in engine runs the model "
                 "without its image part; the llama-server engine can use it.",
                 "在模型旁找到视觉投影文件：{name}（{size}）。内置引擎运行此模型时不使用其图像部分；"
                 "llama-server 引擎可以使用它。", name=name, size=size)

    def check(self) -> Check:
        return Check("projector", Status.OK, self.sentence(), evidence=(f"mmproj={self.path}",))

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "used": self.used, "weight_bytes": self.memory.weight_bytes,
                "compute_bytes": self.memory.compute_bytes, "total_bytes": self.memory.total_bytes}


def found_projector(model_path: str | os.PathLike[str], backend: str,
                    flash_attn: bool | None = None) -> FoundProjector | None:
    """The projector next to ``model_path`` (app.core.gguf.projector.find_projector) with its memory; None if none."""
    path = find_projector(model_path)
    info = read_projector(path) if path is not None else None
    if info is None:
        return None
    return FoundProjector(str(path), projector_memory(info, flash_attn), used=backend == BACKEND_LLAMA_SERVER)
