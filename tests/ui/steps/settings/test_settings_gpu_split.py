"""With two GPUs the Settings step's plan text says how the layers are split (a core sentence, no flags)."""

from __future__ import annotations

from app.core.launch.config import LaunchConfig
from app.ui.steps.settings.settings_preview import compute_preview, plan_text
from tests.unit.core.plan.test_gpu_split import two_gpu_report
from tests.unit.core.plan.test_plan import make_info

MiB = 1024**2


def test_the_plan_text_names_each_cards_layers(qapp):
    info = make_info(n_layer=32, layer_bytes=[200 * MiB] * 32)
    preview = compute_preview(info, LaunchConfig(model="m.gguf", ctx=4096, gpu_layers=-1), two_gpu_report())
    text = plan_text(preview)
    assert "Layers 0–13 on GPU 0 (NVIDIA GeForce RTX 3060 Ti), 14–32 on GPU 1 (NVIDIA GeForce RTX 3060)." in text
    assert "--" not in text
