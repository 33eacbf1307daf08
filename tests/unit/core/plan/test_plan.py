"""Memory plan: exact KV sizes, llama.cpp's layer placement, budgets and the highest fitting values."""

from __future__ import annotations

import argparse
import json

import pytest

from app.cli import main
from app.cli.plan import parse_bytes
from app.core.gguf.model_info import ModelInfo
from app.core.gguf.reader import read_model_info
from app.core.launch.config import LaunchConfig
from app.core.plan.budget import Margins, device_budgets
from app.core.plan.cells import Cells, cache_layer_bytes, cells_for, context_bytes_per_token
from app.core.plan.compute import compute_buffer_bytes
from app.core.plan.estimate import estimate_devices
from app.core.plan.kv import padded_cells
from app.core.plan.layers import CPU, assign_layers, weights_by_device
from app.core.plan.layout import cache_layout
from app.core.plan.memory import make_plan
from app.core.problem import UserError

GiB = 1024**3
MiB = 1024**2


def make_info(n_layer=32, n_head=32, n_head_kv=8, head_dim=128, n_embd=4096, vocab=128256, ctx_train=131072,
              layer_bytes=None, non_layer=None, **overrides) -> ModelInfo:
    heads_kv = n_head_kv if isinstance(n_head_kv, list) else [n_head_kv] * n_layer
    fields = dict(
        path="/models/shape.gguf", file_size=0, version=3, big_endian=False, alignment=32, architecture="llama",
        name="shape", file_type=7, file_type_name="MOSTLY_Q8_0", parameter_count=0, context_length=ctx_train,
        embedding_length=n_embd, block_count=n_layer, head_count=[n_head] * n_layer, head_count_kv=heads_kv,
        key_length=head_dim, value_length=head_dim, vocab_size=vocab, has_chat_template=True, tensor_types={},
        layer_bytes=layer_bytes if layer_bytes is not None else [200 * MiB] * n_layer,
        non_layer_bytes=non_layer if non_layer is not None else {
            "token_embd.weight": 500 * MiB, "output.weight": 500 * MiB, "output_norm.weight": 16 * 1024},
        tensors=[], data_offset=0, data_end=0, split_no=None, split_count=None, split_tensors_count=None,
        metadata={"llama.feed_forward_length": 14336},
    )
    fields.update(overrides)
    return ModelInfo(**fields)


# -- KV cache -----------------------------------------------------------------------------------------------

def _kv_layers(info, cells, type_k="f16", type_v="f16"):
    return cache_layer_bytes(cache_layout(info), Cells(cells, cells, 1, 1, 512), type_k, type_v)


def test_kv_llama_3_1_8b_is_128_kib_per_token_in_f16():
    info = make_info()
    assert context_bytes_per_token(cache_layout(info), plan_config(8192)) == 131072
    assert sum(_kv_layers(info, 8192)) == 1 * GiB


@pytest.mark.parametrize("type_k, type_v, expected", [
    ("q8_0", "q8_0", 8192 * 32 * 8 * (136 + 136)),  # 128 values * 34/32 = 136 bytes per head
    ("q4_0", "q4_0", 8192 * 32 * 8 * (72 + 72)),  # 128 * 18/32 = 72
    ("q8_0", "f16", 8192 * 32 * 8 * (136 + 256)),
    ("f32", "f32", 2 * GiB),
    ("q5_1", "q4_1", 8192 * 32 * 8 * (96 + 80)),
])
def test_kv_quantized_cache_types_exact(type_k, type_v, expected):
    assert sum(_kv_layers(make_info(), 8192, type_k, type_v)) == expected


def test_kv_per_layer_head_arrays_and_different_key_value_lengths():
    info = make_info(n_layer=4, n_head_kv=[8, 0, 2, 4], head_dim=128, value_length=64)
    # cells * heads * (key_len * 2 + value_len * 2)
    assert _kv_layers(info, 1024) == [1024 * 8 * (256 + 128), 0, 1024 * 2 * (256 + 128), 1024 * 4 * (256 + 128)]


def test_quantized_sizes_round_up_per_layer():
    info = make_info(n_layer=1, n_head_kv=1, head_dim=32)  # 32 values per head: one q4_0 block = 18 bytes
    assert _kv_layers(info, 1, "q4_0", "q4_0") == [36]
    assert _kv_layers(info, 3, "q8_0", "f16") == [3 * 34 + 3 * 64]


def test_context_is_padded_to_256_cells():
    assert padded_cells(1) == 256
    assert padded_cells(1000) == 1024
    assert padded_cells(4096) == 4096


def test_unknown_cache_type_is_a_user_error():
    with pytest.raises(UserError) as caught:
        _kv_layers(make_info(), 256, "q3_k")
    assert "q3_k" in str(caught.value)


# -- layer placement ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("ngl, gpu_layers, output_on_gpu", [
    (0, [], False), (1, [], True), (3, [8, 9], True), (10, list(range(1, 10)), True),
    (11, list(range(10)), True), (-1, list(range(10)), True), (99, list(range(10)), True),
])
def test_the_output_layer_goes_to_the_gpu_first_then_the_last_layers(ngl, gpu_layers, output_on_gpu):
    assignment = assign_layers(10, ngl)
    assert assignment.layers_on(0) == gpu_layers
    assert assignment.layers_on(CPU) == [i for i in range(10) if i not in gpu_layers]
    assert assignment.output_on_gpu is output_on_gpu


def test_two_gpus_split_by_free_memory_output_on_the_last():
    assignment = assign_layers(10, 11, [1.0, 1.0])
    assert assignment.layers_on(0) == [0, 1, 2, 3, 4, 5]
    assert assignment.layers_on(1) == [6, 7, 8, 9]
    assert assignment.output_device == 1
    lopsided = assign_layers(10, 11, [3.0, 1.0])
    assert len(lopsided.layers_on(0)) > len(lopsided.layers_on(1))


def test_no_gpu_means_everything_on_the_cpu():
    assignment = assign_layers(10, -1, [])
    assert assignment.layers_on(CPU) == list(range(10)) and not assignment.output_on_gpu


def test_weights_use_the_files_real_per_layer_bytes(make_model):
    info = read_model_info(make_model("w.gguf", n_layers=6, n_embd=128, n_ff=256, n_extra_tokens=500))
    total = sum(info.layer_bytes) + sum(info.non_layer_bytes.values())
    for ngl in range(0, 8):
        weights = weights_by_device(info, assign_layers(6, ngl))
        assert sum(weights.values()) == total
        on_gpu = weights.get(0, 0)
        expected = sum(info.layer_bytes[7 - ngl:]) if ngl else 0  # the last ngl - 1 layers and the output layer
        if ngl:
            expected += info.non_layer_bytes["output.weight"] + info.non_layer_bytes["output_norm.weight"]
        assert on_gpu == expected
    assert weights_by_device(info, assign_layers(6, 0))[CPU] == total


def test_tied_embeddings_are_loaded_again_as_output_on_the_gpu():
    info = make_info(n_layer=2, layer_bytes=[10, 10], non_layer={"token_embd.weight": 1000, "output_norm.weight": 4})
    assert weights_by_device(info, assign_layers(2, 1)) == {CPU: 1020, 0: 1004}
    assert weights_by_device(info, assign_layers(2, 3)) == {CPU: 1000, 0: 1024}


# -- budgets and the plan ---------------------------------------------------------------------------------------

def test_8_gb_card_plans_partial_offload_without_any_gpu():
    info = make_info()  # ~6.25 GiB of layers + 1 GiB input/output
    plan = make_plan(info, LaunchConfig(model="m", ctx=8192, gpu_layers=-1), None,
                     vram_budget=8 * GiB, ram_budget=32 * GiB)
    gpu = plan.device("GPU 0")
    assert gpu.budget.simulated and not plan.fits and not gpu.fits
    assert gpu.kv_bytes == 1 * GiB and gpu.weights_bytes == 32 * 200 * MiB + 500 * MiB + 16 * 1024
    assert 0 < plan.max_gpu_layers < 33
    assert plan.recommended_gpu_layers == plan.max_gpu_layers and plan.recommended_ctx == 8192
    budgets = device_budgets(None, vram_budget=8 * GiB, ram_budget=32 * GiB)

    def fits(ngl: int) -> bool:
        return all(d.fits for d in estimate_devices(info, plan_config(8192), ngl, 8192, budgets)[1])

    assert fits(plan.max_gpu_layers) and not fits(plan.max_gpu_layers + 1)


def plan_config(ctx: int, **kw) -> LaunchConfig:
    return LaunchConfig(model="m", ctx=ctx, **kw)


def test_more_vram_never_means_fewer_layers():
    info = make_info()
    previous = -1
    for gib in (2, 4, 6, 8, 10, 12, 16):
        plan = make_plan(info, plan_config(4096, gpu_layers=-1), None, vram_budget=gib * GiB, ram_budget=64 * GiB)
        layers = plan.max_gpu_layers if plan.max_gpu_layers is not None else -1
        assert layers >= previous
        previous = layers
    assert previous == 33  # 16 GiB holds every layer and the output layer


def test_vram_margin_is_max_of_512_mib_and_5_percent():
    margins = Margins()
    assert margins.vram_keep(8 * GiB) == 512 * MiB
    assert margins.vram_keep(24 * GiB) == int(24 * GiB * 0.05)


def test_cpu_only_plan_finds_the_largest_context_under_the_ram_budget():
    info = make_info(n_layer=4, layer_bytes=[10 * MiB] * 4,
                     non_layer={"token_embd.weight": 10 * MiB, "output.weight": 10 * MiB})
    config = plan_config(131072, flash_attn=True)
    plan = make_plan(info, config, None, ram_budget=2 * GiB, margins=Margins(ram_min_bytes=0, ram_fraction=0))
    assert plan.max_gpu_layers is None and not plan.fits and not plan.has_gpu
    best = plan.recommended_ctx
    assert best % 256 == 0 and 256 <= best < 131072
    budgets = device_budgets(None, ram_budget=2 * GiB, margins=Margins(ram_min_bytes=0, ram_fraction=0))

    def ram_at(ctx: int):
        return estimate_devices(info, config, 0, ctx, budgets)[1][-1]

    assert ram_at(best).fits and not ram_at(best + 256).fits
    # the KV cache is what grows: 4 layers * 8 heads * 128 * 2 * 2 bytes = 16 KiB per token
    assert ram_at(best + 256).kv_bytes - ram_at(best).kv_bytes == 256 * 16 * 1024


def test_compute_buffer_grows_with_ctx_without_flash_attention_and_is_larger_for_partial_offload():
    info = make_info()
    budgets = device_budgets(None, vram_budget=80 * GiB, ram_budget=64 * GiB)
    full = estimate_devices(info, plan_config(8192, flash_attn=False), 33, 8192, budgets)[1][0]
    longer = estimate_devices(info, plan_config(16384, flash_attn=False), 33, 16384, budgets)[1][0]
    partial = estimate_devices(info, plan_config(8192, flash_attn=False), 20, 8192, budgets)[1][0]
    flash = estimate_devices(info, plan_config(8192, flash_attn=True), 33, 8192, budgets)[1][0]
    assert full.compute_bytes >= 4 * 512 * 8192 * 32  # the attention scores alone
    assert longer.compute_bytes > full.compute_bytes
    assert partial.compute_bytes > full.compute_bytes
    assert flash.compute_bytes < full.compute_bytes


def test_plan_to_dict_is_json_and_bilingual(make_model):
    info = read_model_info(make_model("d.gguf", n_layers=4))
    plan = make_plan(info, LaunchConfig(model=str(info.path), ctx=1024), None, vram_budget=2 * GiB)
    data = json.loads(json.dumps(plan.to_dict("zh")))
    assert {"devices", "fits", "max_gpu_layers", "max_ctx", "recommended_gpu_layers", "recommended_ctx",
            "kv_bytes_per_token", "summary"} <= set(data)
    assert data["devices"][0]["kind"] == "gpu" and data["devices"][-1]["kind"] == "cpu"
    assert any("估算" in line for line in data["summary"])


def test_model_without_shape_is_a_user_error():
    with pytest.raises(UserError):
        make_plan(make_info(block_count=None), plan_config(512), None)


# -- CLI ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("8G", 8 * GiB), ("8GiB", 8 * GiB), ("8gb", 8 * GiB), ("512M", 512 * MiB), ("1.5g", int(1.5 * GiB)),
    ("1048576", 1048576), ("64k", 65536),
])
def test_parse_bytes(text, expected):
    assert parse_bytes(text) == expected


def test_parse_bytes_rejects_nonsense():
    with pytest.raises(argparse.ArgumentTypeError):
        parse_bytes("eight gigs")


def test_plan_cli_json(make_model, capsys):
    path = make_model("cli.gguf", n_layers=4, ctx_train=2048)
    code = main(["plan", str(path), "--vram-budget", "4G", "--ctx", "1024", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["fits"] is True and data["ctx"] == 1024
    assert data["recommended_gpu_layers"] == 5 and data["devices"][0]["simulated"] is True
    code = main(["plan", str(path), "--vram-budget", "100M", "--ram-budget", "50M"])
    out = capsys.readouterr().out
    assert code == 1 and "does not fit" in out


def test_plan_cli_missing_file_is_a_sentence(tmp_path, capsys):
    assert main(["plan", str(tmp_path / "missing.gguf")]) == 1
    assert "Traceback" not in capsys.readouterr().err


def test_parallel_slots_share_the_context_in_llama_server():
    from app.core.plan.estimate import kv_cells

    assert kv_cells(plan_config(8192, backend="llama-server", parallel=4), 8192) == 8192
    assert kv_cells(plan_config(5000, backend="llama-server", parallel=4), 5000) == 4 * 1280  # pad256(5120 / 4)
    assert kv_cells(plan_config(5000, backend="embedded", parallel=4), 5000) == 5120


@pytest.mark.parametrize("ctx, reported_mib", [(2048, 79.01), (8192, 283.01), (16384, 555.01)])
def test_cpu_compute_buffer_matches_what_llama_cpp_reported(ctx, reported_mib):
    """Recorded from llama-cpp-python 0.3.36 (flash attention off), a 4-layer 1024-wide GQA model:
    'sched_reserve: CPU compute buffer size = 283.01 MiB' at ctx 8192."""
    info = make_info(n_layer=4, n_head=16, n_head_kv=4, head_dim=64, n_embd=1024, vocab=259,
                     metadata={"llama.feed_forward_length": 2048})
    config = plan_config(ctx, flash_attn=False)  # as recorded: the built-in engine now runs with "auto" (on)
    layout = cache_layout(info)
    cells = cells_for(config, ctx, layout)
    assert abs(compute_buffer_bytes(info, config, layout, cells) / (reported_mib * MiB) - 1) < 0.06
    # in RAM: the part of it a one-row output touches (here all of it: attention is the widest) and the work
    # buffer where the CPU converts the scores to f16 for V × softmax(KQ)
    ram = estimate_devices(info, config, 0, ctx, device_budgets(None, ram_budget=64 * GiB))[1][-1]
    assert ram.compute_bytes == compute_buffer_bytes(info, config, layout, cells) + 2 * 512 * ctx * 16


def test_memory_mapped_token_embeddings_are_not_counted_as_resident():
    info = make_info(n_layer=2, layer_bytes=[10, 10], non_layer={"token_embd.weight": 1000, "output.weight": 500})
    assert weights_by_device(info, assign_layers(2, 0), sparse_input=True) == {CPU: 520}
    assert weights_by_device(info, assign_layers(2, 0), sparse_input=False) == {CPU: 1520}
    tied = make_info(n_layer=2, layer_bytes=[10, 10], non_layer={"token_embd.weight": 1000})
    assert weights_by_device(tied, assign_layers(2, 0), sparse_input=True) == {CPU: 1020}  # it is the output too


def test_embedded_engine_keeps_every_tokens_logits_only_when_the_user_turns_it_on():
    info = make_info(n_layer=2, vocab=32000)
    budgets = device_budgets(None, ram_budget=64 * GiB)
    default = estimate_devices(info, plan_config(8192), 0, 8192, budgets)[1][-1]
    server = estimate_devices(info, plan_config(8192, backend="llama-server"), 0, 8192, budgets)[1][-1]
    on = estimate_devices(info, plan_config(8192, extra_args=("--logits_all", "true")), 0, 8192, budgets)[1][-1]
    logits = 4 * 32000 * (8192 + 512)
    assert on.overhead_bytes - default.overhead_bytes == logits
    assert server.overhead_bytes < default.overhead_bytes  # llama-server's own baseline is smaller too
    logits_all = plan_config(8192, extra_args=("--logits_all", "1"))
    assert any("every token" in str(n) for n in make_plan(info, logits_all, None).notes)
    assert not any("every token" in str(n) for n in make_plan(info, plan_config(8192), None).notes)


def test_embedded_argv_turns_off_all_logits_and_lets_extra_args_override():
    from app.core.launch.backends import build_argv, embedded_backend

    argv = build_argv(plan_config(2048), embedded_backend())
    assert argv[argv.index("--logits_all") + 1] == "false"
    argv = build_argv(plan_config(2048, extra_args=("--logits_all", "true")), embedded_backend())
    assert argv[-2:] == ["--logits_all", "true"]  # argparse: the last one wins


def test_plan_cli_ram_budget_is_usable_in_full(make_model, capsys):
    # the RAM margin belongs to the machine's real free memory: a 300 MiB budget is 300 MiB for the server
    # (before, a 512 MiB margin was taken out of it and even 256 tokens of context were refused)
    path = make_model("small.gguf", n_layers=4, ctx_train=4096)
    assert main(["plan", str(path), "--ram-budget", "300M", "--ctx", "2048", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    ram = data["devices"][-1]
    assert ram["name"] == "RAM budget" and ram["keep_free_bytes"] == 0 and ram["free_bytes"] == 300 * MiB
    assert data["fits"] and data["max_ctx"] >= 2048


def test_a_prompt_cache_the_user_turns_on_is_counted_in_ram_at_its_cap():
    info = make_info()
    budgets = device_budgets(None, ram_budget=64 * 1024**3)
    base = LaunchConfig(model="m.gguf", backend="llama-server", ctx=4096)
    _, (off,) = estimate_devices(info, base, 0, 4096, budgets)
    _, (on,) = estimate_devices(info, base.with_changes(cache_ram_mib=512), 0, 4096, budgets)
    assert on.overhead_bytes - off.overhead_bytes == 512 * 1024 * 1024
    _, (embedded,) = estimate_devices(info, base.with_changes(backend="embedded", cache_ram_mib=512), 0, 4096,
                                      budgets)
    _, (embedded_off,) = estimate_devices(info, base.with_changes(backend="embedded"), 0, 4096, budgets)
    assert embedded.overhead_bytes == embedded_off.overhead_bytes  # llama-cpp-python has no such cache
