"""Several GPUs: llama.cpp's -ts rule, per-GPU budgets and numbers, the proposed split and the plan's sentence."""

from __future__ import annotations

import json
import struct

import pytest

from app.core.hardware.gpu import GpuInfo
from app.core.hardware.report import HardwareReport
from app.core.launch.config import LaunchConfig
from app.core.plan.budget import DeviceBudget, gpu_shares
from app.core.plan.gpu_split import propose_tensor_split, split_sentence
from app.core.plan.layers import CPU, assign_layers, slot_ranges
from app.core.plan.memory import make_plan
from tests.unit.core.plan.test_plan import make_info

GiB = 1024**3
MiB = 1024**2


def llama_cpp_devices(n_layer: int, ngl: int, shares: list[float]) -> list[int]:
    """llama-model.cpp load_tensors, transcribed with C floats: the device of each slot 0..n_layer (-1 = CPU)."""
    def f32(x: float) -> float:
        return struct.unpack("f", struct.pack("f", x))[0]

    splits, total = [], 0.0
    for share in shares:
        total = f32(total + f32(share))
        splits.append(total)
    splits = [f32(s / total) for s in splits]
    ngl = n_layer + 1 if ngl < 0 else ngl
    start, active = max(n_layer + 1 - ngl, 0), min(ngl, n_layer + 1)
    devices = []
    for il in range(n_layer + 1):
        if il < start or il - start >= active:
            devices.append(-1)
            continue
        position = f32(float(il - start) / active)
        devices.append(next(i for i, s in enumerate(splits) if s > position))  # std::upper_bound
    return devices


def slots_of(assignment) -> list[int]:
    return list(assignment.layer_device) + [assignment.output_device]


@pytest.mark.parametrize("n_layer, ngl, shares", [
    (32, -1, [8.0, 12.0]), (32, 20, [8.0, 12.0]), (32, 32, [1.0, 1.0]), (28, -1, [1.0, 2.0]),
    (61, 50, [3.0, 1.0, 2.0]), (40, 41, [0.0, 1.0]), (24, 7, [7.5, 10.9]), (1, 2, [1.0, 1.0, 1.0]),
])
def test_assignment_matches_llama_cpps_rule_slot_by_slot(n_layer, ngl, shares):
    assert slots_of(assign_layers(n_layer, ngl, shares)) == llama_cpp_devices(n_layer, ngl, shares)


def test_8_and_12_gb_cards_split_by_free_memory_output_on_the_second():
    assignment = assign_layers(32, -1, [8 * GiB, 12 * GiB])  # cumulative 0.4, 1.0 over 33 slots
    assert slot_ranges(assignment, 0) == [(0, 13)] and slot_ranges(assignment, 1) == [(14, 32)]
    assert assignment.output_device == 1


def test_equal_shares_cut_at_exactly_half_goes_to_the_second_card():
    assignment = assign_layers(32, 32, [1.0, 1.0])  # slot 0 stays on the CPU; (17 - 1) / 32 = 0.5 is not < 0.5
    assert slot_ranges(assignment, CPU) == [(0, 0)]
    assert slot_ranges(assignment, 0) == [(1, 16)] and slot_ranges(assignment, 1) == [(17, 32)]


def test_a_tie_at_a_cut_is_decided_in_c_floats_as_llama_cpp_does():
    # 18/33 and 3.6/6.6 are equal on paper; in C floats slot 18 is past the cut (doubles would keep it on GPU 0)
    assert slot_ranges(assign_layers(32, -1, [3.6, 3.0]), 0) == [(0, 17)]


def test_a_card_with_share_zero_gets_nothing():
    assignment = assign_layers(10, -1, [0.0, 1.0])
    assert assignment.layers_on(0) == [] and assignment.offloaded_layers == 10


def budgets(*free_gib: float) -> list[DeviceBudget]:
    return [DeviceBudget("gpu", i, f"Card {i}", int(f * GiB), 512 * MiB) for i, f in enumerate(free_gib)]


def test_shares_follow_split_mode_tensor_split_and_free_memory():
    cards = budgets(8, 12)
    config = LaunchConfig(model="m.gguf")
    assert gpu_shares(config, cards) == [8 * GiB, 12 * GiB]  # llama.cpp's default
    assert gpu_shares(config.with_changes(tensor_split=(3, 1)), cards) == [3.0, 1.0]
    assert gpu_shares(config.with_changes(tensor_split=(2,)), cards) == [2.0, 0.0]  # missing numbers count 0
    assert gpu_shares(config.with_changes(tensor_split=(0, 0, 5)), cards) == [8 * GiB, 12 * GiB]  # all 0 here
    assert gpu_shares(config.with_changes(split_mode="none", main_gpu=1), cards) == [0.0, 1.0]
    assert gpu_shares(config.with_changes(split_mode="none", main_gpu=2), cards) == []


def two_gpu_report(free_gib=(8, 12), names=("NVIDIA GeForce RTX 3060 Ti", "NVIDIA GeForce RTX 3060")):
    gpus = [GpuInfo(i, names[i], f"GPU-{i}", int(f * GiB), int(f * GiB), 0, [], "550.54", "12.4", "8.6",
                    pci_bus_id=f"0000:0{i + 1}:00.0") for i, f in enumerate(free_gib)]
    return HardwareReport("Linux", "6", False, False, False, None, 64 * GiB, 64 * GiB, "sim", 8, 16, [], gpus, [])


def test_plan_for_two_cards_has_per_gpu_numbers_and_says_how_layers_are_split():
    info = make_info(n_layer=32, layer_bytes=[200 * MiB] * 32)
    plan = make_plan(info, LaunchConfig(model="m.gguf", ctx=4096, gpu_layers=-1), two_gpu_report())
    first, second = plan.device("GPU 0"), plan.device("GPU 1")
    assert (first.layers, second.layers) == (14, 18) and second.output_layer and not first.output_layer
    assert first.weights_bytes == 14 * 200 * MiB and second.weights_bytes > 18 * 200 * MiB  # + output layer
    assert plan.fits and plan.gpu_shares == (8 * GiB, 12 * GiB)
    sentence = plan.notes[-1].render("en")
    assert sentence == ("Layers 0–13 on GPU 0 (NVIDIA GeForce RTX 3060 Ti), "
                        "14–32 on GPU 1 (NVIDIA GeForce RTX 3060).")
    assert plan.notes[-1].render("zh").startswith("第 0–13 层在 GPU 0（NVIDIA GeForce RTX 3060 Ti）上，")
    data = json.loads(json.dumps(plan.to_dict("en")))
    assert [d["layer_ranges"] for d in data["devices"][:2]] == [[[0, 13]], [[14, 32]]]
    assert data["devices"][1]["uuid"] == "GPU-1" and len(data["proposed_tensor_split"]) == 2


def test_explicit_tensor_split_moves_layers_and_the_sentence_names_the_processor_part():
    info = make_info(n_layer=32, layer_bytes=[200 * MiB] * 32)
    config = LaunchConfig(model="m.gguf", ctx=4096, gpu_layers=20, tensor_split=(1, 1))
    plan = make_plan(info, config, two_gpu_report())
    assert (plan.device("GPU 0").layers, plan.device("GPU 1").layers) == (10, 9)  # + output = 20 slots
    assert plan.device("RAM").layers == 13
    assert plan.recommended_gpu_layers == 33  # the sentence follows "Plan: put 33 of 33 layers on the GPU"
    assert plan.notes[-1].render("en") == ("Layers 0–16 on GPU 0 (NVIDIA GeForce RTX 3060 Ti), "
                                           "17–32 on GPU 1 (NVIDIA GeForce RTX 3060).")
    partial = split_sentence(assign_layers(32, 20, [1.0, 1.0]), budgets(8, 12)).render("en")
    assert partial == "Layers 0–12 on the processor, 13–22 on GPU 0 (Card 0), 23–32 on GPU 1 (Card 1)."
    assert split_sentence(assign_layers(32, 20, [1.0, 1.0]), budgets(8, 12)).render("zh").startswith(
        "第 0–12 层在处理器上，第 13–22 层在 GPU 0（Card 0）上")
    one = split_sentence(assign_layers(2, -1, [1.0, 3.0]), budgets(8, 12)).render("en")
    assert one == "Layer 0 on GPU 0 (Card 0), 1–2 on GPU 1 (Card 1)."


def test_one_gpu_only_puts_everything_on_the_main_gpu_and_a_missing_one_is_said():
    info = make_info(n_layer=32, layer_bytes=[200 * MiB] * 32)
    config = LaunchConfig(model="m.gguf", ctx=4096, gpu_layers=-1, split_mode="none", main_gpu=1)
    plan = make_plan(info, config, two_gpu_report())
    assert plan.device("GPU 0").total_bytes == 0 and plan.device("GPU 1").layers == 32
    missing = make_plan(info, config.with_changes(main_gpu=3), two_gpu_report())
    assert "GPU 3" in missing.notes[-1].render("en") and missing.device("GPU 1").layers == 0


def test_one_gpu_gets_no_split_sentence_and_no_proposal():
    info = make_info(n_layer=8, layer_bytes=[100 * MiB] * 8)
    plan = make_plan(info, LaunchConfig(model="m.gguf", ctx=2048, gpu_layers=-1), None, vram_budget=8 * GiB)
    assert plan.proposed_tensor_split == () and not any("Layers" in n.render("en") for n in plan.notes)


def test_proposed_split_is_each_cards_room_with_the_output_layer_on_the_last():
    info = make_info(n_layer=32, layer_bytes=[200 * MiB] * 32)
    config = LaunchConfig(model="m.gguf", ctx=4096, gpu_layers=-1)
    cards = [b for b in make_plan(info, config, two_gpu_report()).devices if b.budget.kind == "gpu"]
    proposal = propose_tensor_split(info, config, [c.budget for c in cards] + [DeviceBudget("cpu", -1, "RAM",
                                                                                            64 * GiB, 0)])
    small, large = proposal
    assert 6 < small < 8 and 9 < large < 12  # free minus margin, CUDA context, compute (and output on the large)
    same_free = propose_tensor_split(info, config, budgets(10, 10) + [DeviceBudget("cpu", -1, "RAM", 64 * GiB, 0)])
    assert same_free[0] > same_free[1]  # the output layer takes room on the last card
    # the proposal, used as -ts, still fits on both cards
    plan = make_plan(info, config.with_changes(tensor_split=proposal), two_gpu_report())
    assert plan.fits and plan.device("GPU 1").output_layer
