"""A generated vision projector (mmproj) GGUF that llama.cpp's mtmd loads next to a generated text model.

The simplest projector llama.cpp knows: LLaVA's ``mlp`` type (tools/mtmd/clip.cpp, graph models/llava.cpp): a
ViT (patch embedding by convolution, learned positions, pre-norm blocks with separate Q/K/V, GELU feed-forward)
followed by two linear layers ``mm.0`` and ``mm.2`` that map the vision width to the text model's
``embedding_length`` (mtmd refuses a projector whose output width differs from the text model's). One image of
``image_size`` pixels square becomes ``(image_size / patch_size)^2`` embeddings in the text model's context.

Metadata as convert_hf_to_gguf.py's MmprojModel writes it: ``general.architecture = "clip"``,
``general.type = "mmproj"``, ``clip.projector_type``, ``clip.has_vision_encoder`` and ``clip.vision.*``.
Random weights: the image part of an answer is nonsense, but every kernel of the encoder runs.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from app.core.synthetic.writer import ModelWriter, SyntheticSpec

# CLIP's normalisation constants, as LLaVA's preprocessor_config.json carries them
IMAGE_MEAN = (0.48145466, 0.4578275, 0.40821073)
IMAGE_STD = (0.26862954, 0.26130258, 0.27577711)


@dataclass(frozen=True)
class ProjectorSpec:
    """Sizes of a generated projector; defaults give a ~1 MB file and 16 image embeddings (32 px / 8 px patches).

    clip_graph_llava runs ``n_layers - 1`` blocks (the second-to-last layer feeds the projector, as in LLaVA) but
    llama.cpp loads all of them.
    """

    n_layers: int = 2
    n_embd: int = 128
    n_head: int = 4
    n_ff: int = 256
    proj_hidden: int = 256
    image_size: int = 32
    patch_size: int = 8
    f16: bool = True
    seed: int = 0
    name: str = "tiny-random-mmproj"

    @property
    def n_patches(self) -> int:
        return (self.image_size // self.patch_size) ** 2


def write_projector(path: str | os.PathLike[str], text_n_embd: int, spec: ProjectorSpec | None = None) -> Path:
    """Write a random-weight ``mlp`` projector whose output width is ``text_n_embd`` to ``path``; return the path.

    Written to a temporary file in the same folder and moved into place, so a crash leaves no half file.
    """
    spec = spec or ProjectorSpec()
    if text_n_embd <= 0:
        raise ValueError(f"text_n_embd must be positive, got {text_n_embd}")
    if spec.image_size % spec.patch_size or spec.n_embd % spec.n_head:
        raise ValueError("image_size must be a multiple of patch_size and n_embd of n_head")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        writer = ModelWriter(tmp_name, "clip", SyntheticSpec(f16=spec.f16, seed=spec.seed))
        _metadata(writer.gguf, spec, text_n_embd)
        _tensors(writer, spec, text_n_embd)
        writer.finish()
        os.chmod(tmp_name, 0o644)  # mkstemp makes it 0600; a model file is ordinarily readable
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return target


def _metadata(w, spec: ProjectorSpec, text_n_embd: int) -> None:
    w.add_type("mmproj")
    w.add_name(spec.name)
    w.add_file_type(1 if spec.f16 else 0)
    w.add_string("clip.projector_type", "mlp")
    w.add_bool("clip.has_vision_encoder", True)
    w.add_bool("clip.has_audio_encoder", False)
    w.add_bool("clip.use_gelu", True)
    w.add_uint32("clip.vision.image_size", spec.image_size)
    w.add_uint32("clip.vision.patch_size", spec.patch_size)
    w.add_uint32("clip.vision.embedding_length", spec.n_embd)
    w.add_uint32("clip.vision.feed_forward_length", spec.n_ff)
    w.add_uint32("clip.vision.block_count", spec.n_layers)
    w.add_uint32("clip.vision.projection_dim", text_n_embd)
    w.add_uint32("clip.vision.attention.head_count", spec.n_head)
    w.add_float32("clip.vision.attention.layer_norm_epsilon", 1e-5)
    w.add_array("clip.vision.image_mean", list(IMAGE_MEAN))
    w.add_array("clip.vision.image_std", list(IMAGE_STD))


def _tensors(w: ModelWriter, spec: ProjectorSpec, text_n_embd: int) -> None:
    """Shapes in ggml's order (row length first); matrices F16 or F32 per the spec, norms and biases F32."""
    d, p = spec.n_embd, spec.patch_size
    w.matrix("v.patch_embd.weight", p, p, 3, d)  # conv2d kernel [kw, kh, channels in, channels out]
    w.vector("v.patch_embd.bias", d)
    w.matrix("v.position_embd.weight", d, spec.n_patches, f32=True)
    w.vector("v.pre_ln.weight", d, 1.0)
    w.vector("v.pre_ln.bias", d, 0.0)
    for il in range(spec.n_layers):
        blk = f"v.blk.{il}"
        w.vector(f"{blk}.ln1.weight", d, 1.0)
        w.vector(f"{blk}.ln1.bias", d, 0.0)
        for part in ("attn_q", "attn_k", "attn_v", "attn_out"):
            w.matrix(f"{blk}.{part}.weight", d, d)
            w.vector(f"{blk}.{part}.bias", d)
        w.vector(f"{blk}.ln2.weight", d, 1.0)
        w.vector(f"{blk}.ln2.bias", d, 0.0)
        w.matrix(f"{blk}.ffn_up.weight", d, spec.n_ff)  # n_ff != n_embd keeps llama.cpp's legacy up/down swap off
        w.vector(f"{blk}.ffn_up.bias", spec.n_ff)
        w.matrix(f"{blk}.ffn_down.weight", spec.n_ff, d)
        w.vector(f"{blk}.ffn_down.bias", d)
    w.matrix("mm.0.weight", d, spec.proj_hidden)
    w.vector("mm.0.bias", spec.proj_hidden)
    w.matrix("mm.2.weight", spec.proj_hidden, text_n_embd)
    w.vector("mm.2.bias", text_n_embd)
