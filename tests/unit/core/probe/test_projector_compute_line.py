"""With a vision projector, llama-server -v prints the projector's compute buffer after the model's: the probe
keeps reading the model's."""

from __future__ import annotations

from app.core.probe.evidence import reported_cpu_compute_bytes

MiB = 1024 * 1024

# The real llama-server b11434 with -v, a generated llama and a generated mlp projector (order as printed).
LINES = [
    "0.00.054.631 I sched_reserve:        CPU compute buffer size =     2.38 MiB",
    "0.00.066.865 I get_dummy_batch: warmup with image size = 32 x 32",
    "0.00.068.905 I reserve_compute_meta:        CPU compute buffer size =     0.04 MiB",
    "0.00.068.991 I srv    load_model: loaded multimodal model, 'mmproj-text.gguf'",
]


def test_the_projector_buffer_is_not_the_models():
    assert reported_cpu_compute_bytes(LINES) == int(2.38 * MiB)
    assert reported_cpu_compute_bytes(LINES[2:]) is None
