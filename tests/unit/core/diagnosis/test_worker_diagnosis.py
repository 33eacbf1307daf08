"""A worker that stops answering, cannot be reached or speaks another version: llama.cpp's own lines, in words."""

from __future__ import annotations

import pytest

from app.core.diagnosis import CAUSES, diagnose
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port as closed_port
from app.core.rpc.worker import Worker
from app.core.server.shared_worker import diagnose_worker_exit

# llama-server's last words when a worker went away mid-chat (ggml-rpc.cpp RPC_STATUS_ASSERT), then SIGABRT
LOST = ["srv  update_slots: all slots are idle",
        "/tmp/llama.cpp/ggml/src/ggml-rpc/ggml-rpc.cpp:566: Remote RPC server crashed or returned malformed response"]


def _config(*workers: str) -> LaunchConfig:
    return LaunchConfig(model="/m/a.gguf", backend="llama-server", rpc_workers=workers)


def test_a_worker_gone_mid_chat_is_named_and_the_fix_leaves_it_out():
    gone = f"127.0.0.1:{closed_port()}"
    diagnosis = diagnose(-6, LOST, _config(gone))
    assert diagnosis.cause == "worker_lost" and not diagnosis.restartable  # not on its own: wait, or go without
    assert diagnosis.message.render("en") == f"The worker at {gone} stopped answering, so the model server stopped too."
    assert diagnosis.action.changes == {"rpc_workers": []}  # restart without it
    assert "Remote RPC server" in diagnosis.evidence[0]
    assert diagnosis.message.render("zh").startswith(gone)


def test_a_worker_that_cannot_be_reached_at_start():
    line = "/src/ggml-rpc.cpp:547: Failed to connect to 192.0.2.9:50052"
    diagnosis = diagnose(-6, [line], _config("192.0.2.7:50052", "192.0.2.9:50052"))
    assert diagnosis.cause == "worker_unreachable" and "192.0.2.9:50052" in diagnosis.message.render("en")
    assert diagnosis.action.changes == {"rpc_workers": ["192.0.2.7:50052"]}


@pytest.mark.slow  # the diagnosis waits out a 1 s connect to an unroutable worker
def test_another_protocol_version_is_not_fixed_by_a_restart():
    lines = ["RPC server version mismatch: 6.1.0", "ggml-rpc.cpp:550: RPC handshake failed for 192.0.2.7:50052"]
    diagnosis = diagnose(-6, lines, _config("192.0.2.7:50052"))
    assert diagnosis.cause == "worker_version" and not diagnosis.restartable


def test_a_worker_without_room_for_its_share():
    line = "alloc_tensor_range: failed to allocate RPC0[192.0.2.7:50052] buffer of size 104857600"
    diagnosis = diagnose(1, [line, "llama_model_load: error loading model: unable to allocate"], _config())
    assert diagnosis.cause == "worker_out_of_memory" and "192.0.2.7:50052" in diagnosis.message.render("en")


def test_the_shared_worker_cannot_bind():
    diagnosis = diagnose_worker_exit(1, ["Starting RPC server v7.0.0", "Failed to create server socket"],
                                     Worker("127.0.0.1", 50052))
    assert diagnosis.cause == "worker_port_in_use" and "50053" in diagnosis.next_step.render("en")
    assert {"worker_lost", "worker_unreachable", "worker_version", "worker_out_of_memory",
            "worker_port_in_use"} <= set(CAUSES)


def test_layers_on_workers_are_no_short_gpu_offload_on_a_cpu_only_engine():
    from app.core.diagnosis.offload import offload_diagnosis

    lines = ["load_tensors: offloaded 9/9 layers to GPU",
             "load_tensors: RPC0[127.0.0.1:50052] model buffer size =    37.50 MiB",
             "load_tensors: RPC0[127.0.0.1:50053] model buffer size =    18.75 MiB",
             "load_tensors:   CPU_Mapped model buffer size =     4.00 MiB"]
    assert offload_diagnosis(lines, -1, backends=("CPU", "RPC")) is None
    assert offload_diagnosis(lines[:1] + lines[3:], -1, backends=("CPU", "RPC")).cause == "gpu_offload_short"
