"""RPC workers in the plan: devices before the local GPUs, with the memory they reported, split like -ts."""

from __future__ import annotations

import time

from app.core.hardware.report import HardwareReport
from app.core.launch.config import LaunchConfig
from app.core.plan.memory import make_plan
from app.core.rpc.check import READY, REFUSED, WorkerCheck, remember
from app.core.rpc.protocol import DeviceMemory
from app.core.rpc.worker import Worker
from tests.unit.core.plan.test_plan import make_info

GiB = 1024**3
MiB = 1024**2
A, B = "192.0.2.7:50052", "192.0.2.8:50052"


def _reported(address: str, free: int, state: str = READY) -> None:
    host, port = address.split(":")
    devices = (DeviceMemory(free, free),) if state == READY else ()
    remember(WorkerCheck(Worker(host, int(port)), state, (7, 0, 0), devices, checked_at=time.time()))


def _cpu_only() -> HardwareReport:
    return HardwareReport("Linux", "6", False, False, False, None, 64 * GiB, 64 * GiB, "sim", 8, 16, [], [], [])


def _config(**changes) -> LaunchConfig:
    return LaunchConfig(model="/m/shape.gguf", backend="llama-server", ctx=4096, gpu_layers=-1,
                        rpc_workers=(A, B), **changes)


def test_workers_are_devices_first_with_the_memory_they_reported():
    _reported(A, 16 * GiB)
    _reported(B, 8 * GiB)
    plan = make_plan(make_info(n_layer=8), _config(tensor_split=(3, 1)), _cpu_only())
    labels = [d.budget.label for d in plan.devices]
    assert labels == [f"worker {A}", f"worker {B}", "RAM"]
    first, second, ram = plan.devices
    assert (first.layers, second.layers, second.output_layer) == (7, 1, True)  # -ts 3,1 over 9 slots (8 + output)
    assert first.budget.free_bytes == 16 * GiB and first.overhead_bytes == 0  # no CUDA context for a worker
    assert first.weights_bytes == 7 * 200 * MiB and ram.layers == 0
    assert any(f"worker {A}" in note.render("en") for note in plan.notes)  # "Layers 0-5 on worker ..., 6-8 on ..."


def test_without_a_split_the_workers_share_by_their_memory_like_llama_cpp():
    _reported(A, 12 * GiB)
    _reported(B, 4 * GiB)
    plan = make_plan(make_info(n_layer=8), _config(), _cpu_only())
    assert [d.layers for d in plan.devices[:2]] == [7, 1] and plan.gpu_shares == (12 * GiB, 4 * GiB)


def test_a_worker_that_does_not_answer_has_no_memory_to_offer():
    _reported(A, 16 * GiB)
    _reported(B, 0, REFUSED)
    plan = make_plan(make_info(n_layer=8), _config(tensor_split=(1, 1)), _cpu_only())
    assert plan.devices[1].budget.free_bytes == 0 and not plan.devices[1].fits and not plan.fits


def test_pipeline_parallelism_only_with_every_layer_over_several_workers():
    from app.core.plan.estimate import PIPELINE_COPIES

    _reported(A, 16 * GiB)
    _reported(B, 16 * GiB)
    info = make_info(n_layer=8)
    hidden = 4 * 512 * info.embedding_length  # one micro-batch of hidden states, f32
    every = make_plan(info, _config(), _cpu_only()).devices
    assert every[0].compute_bytes - every[1].compute_bytes == (PIPELINE_COPIES - 1) * 3 * hidden  # the first: 4
    partial = make_plan(info, _config().with_changes(gpu_layers=6), _cpu_only()).devices
    assert partial[0].compute_bytes == partial[1].compute_bytes  # no copies: llama.cpp turns it off
