"""A vision projector's memory: weights and one image's compute buffer, pinned on real llama-server b11434 logs.

Recorded with ``llama-server -m <generated llama> --mmproj <generated mlp projector> -c 256 -v -fa on|off``:
``load_hparams: model size``, ``reserve_compute_meta: CPU compute buffer size`` and ``[mtmd] estimated worst-case
memory usage of mmproj`` (= the two added), in MiB.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from app.core.gguf.reader import read_model_info
from app.core.plan.projector import projector_bytes, projector_compute_bytes, projector_memory
from app.core.synthetic.projector import write_projector

MIB = 1024 * 1024

# (n_embd, n_head, n_ff, image_size, patch_size, projector hidden) -> compute MiB with flash attention on, off
RECORDED = [
    ((1024, 16, 4096, 336, 14, 4096), 17.05, 30.55),  # CLIP-L/14 at 336 px, LLaVA-1.5's encoder widths
    ((1024, 16, 4096, 336, 14, 1024), 17.05, 30.55),  # the projector's hidden width does not matter
    ((1024, 16, 4096, 448, 14, 4096), 30.30, 82.30),  # 1024 positions: attention scores dominate without FA
    ((512, 8, 2048, 224, 16, 2048), 2.87, 2.90),
    ((128, 4, 256, 32, 8, 256), 0.04, 0.04),  # the default generated projector
]


def info_for(n_embd, n_head, n_ff, image, patch, hidden):
    meta = {"clip.vision.embedding_length": n_embd, "clip.vision.attention.head_count": n_head,
            "clip.vision.feed_forward_length": n_ff, "clip.vision.image_size": image,
            "clip.vision.patch_size": patch, "clip.vision.projection_dim": hidden}
    return SimpleNamespace(metadata=meta, tensors=[], tensor_data_bytes=0)


def test_weights_are_the_tensor_bytes_llama_cpp_loads(tmp_path):
    info = read_model_info(write_projector(tmp_path / "mmproj.gguf", 256))
    assert projector_bytes(info) == 793088  # the 41 tensor_size= values of the real log summed (0.76 MiB)


@pytest.mark.parametrize("sizes, fa_on, fa_off", RECORDED)
def test_compute_buffer_follows_the_real_log(sizes, fa_on, fa_off):
    info = info_for(*sizes)
    on, off = projector_compute_bytes(info, True) / MIB, projector_compute_bytes(info, False) / MIB
    # never lower than llama.cpp (the unsafe side), at most 15 % or 0.5 MiB above it
    assert fa_on - 0.01 <= on <= max(fa_on * 1.15, fa_on + 0.5), on
    assert fa_off - 0.01 <= off <= max(fa_off * 1.15, fa_off + 0.5), off
    assert projector_compute_bytes(info) == projector_compute_bytes(info, False)  # engine decides: the larger


def test_clip_l_total_matches_the_servers_own_estimate():
    info = info_for(1024, 16, 4096, 336, 14, 4096)
    info.tensor_data_bytes = round(61.53 * MIB)
    memory = projector_memory(info, flash_attn=True)
    assert abs(memory.total_bytes / MIB - 78.57) < 0.05  # "[mtmd] estimated worst-case memory usage ... 78.57 MiB"


def test_an_audio_only_projector_has_no_image_compute():
    info = SimpleNamespace(metadata={"clip.has_audio_encoder": True}, tensors=[], tensor_data_bytes=1000)
    assert projector_compute_bytes(info) == 0 and projector_memory(info).total_bytes == 1000
