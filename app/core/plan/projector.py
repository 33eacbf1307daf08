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

from dataclasses import dataclass
from typing import Any

F32 = 4


@dataclass(frozen=True)
class ProjectorMemory:
    weight_bytes: int
    compute_bytes: int

    @property
    def total_bytes(self) -> int:
        return self.weight_bytes + self.compute_bytes


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
