"""What the compute of a CPU load holds in RAM: the pages of the reserved buffer the graphs really write, and the CPU
backend's work buffer. Shapes of SmolLM2-135M (30 layers, 576 wide, 9 heads of 64, 3 KV heads, 49,152 tokens)."""

from __future__ import annotations

from app.core.launch.config import BACKEND_LLAMA_SERVER, LaunchConfig
from app.core.plan.budget import device_budgets
from app.core.plan.cells import cells_for
from app.core.plan.compute import (
    compute_buffer_bytes,
    computed_output_rows,
    cpu_work_bytes,
    resident_compute_bytes,
)
from app.core.plan.estimate import estimate_devices
from app.core.plan.layout import cache_layout
from tests.unit.core.plan.test_plan import make_info

MiB = 1024**2
SMOLLM2 = dict(n_layer=30, n_head=9, n_head_kv=3, head_dim=64, n_embd=576, vocab=49152,
               metadata={"llama.feed_forward_length": 1536})


def _parts(config: LaunchConfig, ctx: int):
    info = make_info(**SMOLLM2)
    layout = cache_layout(info)
    return info, layout, cells_for(config, ctx, layout)


def test_the_built_in_engine_computes_one_row_of_logits_though_it_reserves_a_batch():
    """llama-cpp-python reserves 99.38 MiB at -c 4096 (96 MiB of it the logits of 512 tokens: its log says so), yet
    with logits_all off only the last token's row is ever computed: those pages are never written."""
    embedded = LaunchConfig(model="m", ctx=2048)
    info, layout, cells = _parts(embedded, 2048)
    assert computed_output_rows(embedded, cells) == 1
    assert compute_buffer_bytes(info, embedded, layout, cells) >= 96 * MiB  # the reservation
    resident = resident_compute_bytes(info, embedded, layout, cells)
    assert resident < 70 * MiB  # masks, scores and the rest of one layer, and the work buffer
    assert resident == compute_buffer_bytes(info, embedded, layout, cells, 1) + cpu_work_bytes(
        info, embedded, layout, cells)
    every_token = embedded.with_changes(extra_args=("--logits_all", "true"))
    assert computed_output_rows(every_token, cells) == 512


def test_llama_server_computes_what_it_reserves_one_row_per_slot():
    server = LaunchConfig(model="m", backend=BACKEND_LLAMA_SERVER, ctx=8192, parallel=4)
    info, layout, cells = _parts(server, 8192)
    assert computed_output_rows(server, cells) == 4
    assert cpu_work_bytes(info, server, layout, cells) == 0  # flash attention (auto): no scores to convert
    assert resident_compute_bytes(info, server, layout, cells) == compute_buffer_bytes(info, server, layout, cells)


def test_without_flash_attention_the_scores_are_converted_in_a_work_buffer():
    for backend in ("embedded", BACKEND_LLAMA_SERVER):
        config = LaunchConfig(model="m", backend=backend, ctx=8192, parallel=1, flash_attn=False)
        info, layout, cells = _parts(config, 8192)
        assert cpu_work_bytes(info, config, layout, cells) == 2 * 512 * 8192 * 9  # f16 scores: 72 MiB
        f32_cache = config.with_changes(cache_type_k="f32", cache_type_v="f32")
        assert cpu_work_bytes(info, f32_cache, layout, cells) == 0  # an f32 V needs no conversion


def test_ram_holds_the_resident_compute_while_a_gpu_holds_the_reservation():
    embedded = LaunchConfig(model="m", ctx=2048, gpu_layers=0)
    info, layout, cells = _parts(embedded, 2048)
    budgets = device_budgets(None, vram_budget=8 * 1024 * MiB, ram_budget=64 * 1024 * MiB)
    gpu, ram = estimate_devices(info, embedded, 31, 2048, budgets)[1]  # everything offloaded
    assert gpu.compute_bytes == compute_buffer_bytes(info, embedded, layout, cells)  # allocated on the device
    ram = estimate_devices(info, embedded, 0, 2048, device_budgets(None, ram_budget=64 * 1024 * MiB))[1][-1]
    assert ram.compute_bytes == resident_compute_bytes(info, embedded, layout, cells)
