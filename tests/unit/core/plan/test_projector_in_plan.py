"""A vision projector in the plan: llama-server loads it whole, in RAM when no layer is on a GPU (the app passes
--no-mmproj-offload then), on the first GPU otherwise; the built-in engine does not load it, so it costs nothing."""

from __future__ import annotations

from app.core.gguf.reader import read_model_info
from app.core.launch.config import LaunchConfig
from app.core.plan.budget import device_budgets
from app.core.plan.estimate import estimate_devices
from app.core.plan.projector import projector_memory
from app.core.synthetic.projector import write_projector
from app.core.synthetic.tiny_llama import write_tiny_llama


def test_the_projector_is_counted_where_llama_server_puts_it(tmp_path):
    model = write_tiny_llama(tmp_path / "m.gguf")
    info = read_model_info(model)
    projector = write_projector(tmp_path / "mmproj-m.gguf", info.embedding_length)
    size = projector_memory(read_model_info(projector)).total_bytes
    assert size > 700_000
    config = LaunchConfig(model=str(model), backend="llama-server", ctx=512)
    ram_only = device_budgets(None, ram_budget=8 * 1024**3)
    (plain,) = estimate_devices(info, config, 0, 512, ram_only)[1]
    (with_it,) = estimate_devices(info, config.with_changes(mmproj=str(projector)), 0, 512, ram_only)[1]
    assert with_it.weights_bytes - plain.weights_bytes == size
    (embedded,) = estimate_devices(info, config.with_changes(backend="embedded", mmproj=str(projector)), 0, 512,
                                   ram_only)[1]
    (embedded_plain,) = estimate_devices(info, config.with_changes(backend="embedded"), 0, 512, ram_only)[1]
    assert embedded.weights_bytes == embedded_plain.weights_bytes
    card = device_budgets(None, vram_budget=8 * 1024**3, ram_budget=8 * 1024**3)
    gpu, ram = estimate_devices(info, config.with_changes(mmproj=str(projector), gpu_layers=-1), -1, 512, card)[1]
    gpu_plain, ram_plain = estimate_devices(info, config.with_changes(gpu_layers=-1), -1, 512, card)[1]
    assert gpu.weights_bytes - gpu_plain.weights_bytes == size and ram.weights_bytes == ram_plain.weights_bytes
    missing = config.with_changes(mmproj=str(tmp_path / "gone.gguf"))
    assert estimate_devices(info, missing, 0, 512, ram_only)[1][0].weights_bytes == plain.weights_bytes
