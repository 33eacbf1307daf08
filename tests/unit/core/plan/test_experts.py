"""Expert / non-expert bytes per layer (app/core/plan/experts.py), on a generated Qwen3-MoE file and on names."""

from __future__ import annotations

import pytest

from app.core.gguf.reader import read_model_info
from app.core.plan.experts import expert_split, is_expert_tensor
from app.core.synthetic import write_model


@pytest.mark.parametrize("name, expert", [
    ("blk.3.ffn_up_exps.weight", True),
    ("blk.3.ffn_gate_exps.weight", True),
    ("blk.3.ffn_down_exps.weight", True),
    ("blk.3.ffn_gate_up_exps.weight", True),  # fused gate+up experts
    ("blk.3.ffn_up_chexps.weight", True),  # chunked experts
    ("blk.3.ffn_down_exps.bias", True),  # gpt-oss's expert biases move with them
    ("blk.3.ffn_gate_inp.weight", False),  # the router stays with the layer
    ("blk.3.ffn_up_shexp.weight", False),  # shared experts too (llama.cpp's pattern does not match them)
    ("blk.3.ffn_up.weight", False),  # a dense layer's feed-forward
    ("blk.3.attn_q.weight", False),
])
def test_the_tensors_llama_cpp_moves_with_cpu_moe(name, expert):
    assert is_expert_tensor(name) is expert


def test_a_moe_file_splits_each_layer_into_experts_and_the_rest(tmp_path):
    info = read_model_info(write_model("qwen3moe", tmp_path / "moe.gguf"))
    split = expert_split(info)
    assert split.is_moe and split.expert_count >= 2 and 1 <= split.expert_used_count <= split.expert_count
    assert len(split.layers) == info.block_count and split.expert_layers == tuple(range(info.block_count))
    for il, layer in enumerate(split.layers):
        tensors = [t for t in info.tensors if t.layer == il]
        assert layer.expert_bytes == sum(t.n_bytes for t in tensors if "_exps." in t.name) > 0
        assert layer.total == info.layer_bytes[il]  # nothing lost, nothing counted twice
    assert split.moved_to_cpu(0) == 0 and split.moved_to_cpu(99) == split.expert_bytes
    assert split.moved_to_cpu(1) == split.layers[0].expert_bytes
    as_dict = split.to_dict()
    assert as_dict["expert_bytes"] == split.expert_bytes and len(as_dict["per_layer"]) == info.block_count


def test_a_dense_file_has_no_experts(tiny_model):
    split = expert_split(read_model_info(tiny_model))
    assert not split.is_moe and split.expert_bytes == 0 and split.expert_layers == ()
    assert split.other_bytes == sum(read_model_info(tiny_model).layer_bytes)


def test_n_cpu_moe_moves_exactly_those_experts_from_the_gpu_to_ram(tmp_path):
    from app.core.launch.config import LaunchConfig
    from app.core.plan.budget import device_budgets
    from app.core.plan.estimate import estimate_devices

    info = read_model_info(write_model("qwen3moe", tmp_path / "moe.gguf"))
    split = expert_split(info)
    budgets = device_budgets(None, vram_budget=8 * 1024**3, ram_budget=16 * 1024**3)
    config = LaunchConfig(model=str(tmp_path / "moe.gguf"), backend="llama-server", ctx=2048, gpu_layers=-1)
    _, (gpu, ram) = estimate_devices(info, config, -1, 2048, budgets)
    for n in (1, 2, 99):
        _, (gpu_n, ram_n) = estimate_devices(info, config.with_changes(n_cpu_moe=n), -1, 2048, budgets)
        moved = split.moved_to_cpu(n)
        assert moved > 0 and gpu.weights_bytes - gpu_n.weights_bytes == moved
        assert ram_n.weights_bytes - ram.weights_bytes == moved
        assert gpu_n.layers == gpu.layers  # the layers (attention, router) stay on the GPU
        assert ram_n.compute_bytes >= ram.compute_bytes  # the CPU now computes the experts too
    _, (_, cpu_only) = estimate_devices(info, config.with_changes(n_cpu_moe=2, gpu_layers=0), 0, 2048, budgets)
    _, (_, cpu_plain) = estimate_devices(info, config.with_changes(gpu_layers=0), 0, 2048, budgets)
    assert cpu_only.weights_bytes == cpu_plain.weights_bytes  # nothing to move when no layer is on a GPU
