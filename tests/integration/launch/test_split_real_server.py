"""The several-GPU flags in a real start: both engines take -ts/-sm/-mg (a CPU build has no GPU to split over,
so the split is read and ignored) and still load and answer; the child sees CUDA's order pinned."""

from __future__ import annotations

import psutil
import pytest

from app.core.server.supervisor import State
from tests.integration.server.test_supervisor_lifecycle import chat_once

SPLIT = dict(tensor_split=(1.0, 1.0), split_mode="layer", main_gpu=0, gpu_layers=-1)


@pytest.mark.slow
def test_llama_server_with_a_tensor_split_loads_on_the_cpu(running_server):
    supervisor = running_server("llama-server", **SPLIT)
    argv = supervisor.argv
    assert argv[argv.index("-ts") + 1] == "1,1"
    assert chat_once(supervisor)["choices"][0]["message"]["role"] == "assistant"
    assert psutil.Process(supervisor.pid).environ().get("CUDA_DEVICE_ORDER") == "PCI_BUS_ID"
    supervisor.stop()
    assert supervisor.state is State.STOPPED


@pytest.mark.slow
def test_built_in_engine_with_a_tensor_split_and_row_mode_loads_on_the_cpu(running_server):
    supervisor = running_server("embedded", **(SPLIT | {"split_mode": "row", "main_gpu": 0}))
    argv = supervisor.argv
    at = argv.index("--tensor_split")
    assert argv[at + 1:at + 3] == ["1", "1"] and argv[argv.index("--split_mode") + 1] == "2"
    assert chat_once(supervisor)["choices"][0]["message"]["role"] == "assistant"
