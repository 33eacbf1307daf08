"""Every child the app starts numbers CUDA devices in PCI order, as NVML does (a real child process)."""

from __future__ import annotations

import sys
import threading

from app.core.process.child import ChildProcess, pinned_gpu_order


def _child_sees(env):
    lines, done = [], threading.Event()
    code = "import os; print(os.environ.get('CUDA_DEVICE_ORDER'), os.environ.get('KEEP'))"
    child = ChildProcess([sys.executable, "-c", code], env=env, register=False,
                         on_line=lambda _stream, text: lines.append(text), on_exit=lambda *_: done.set())
    assert done.wait(30)
    child.wait(5)
    return lines


def test_a_child_gets_cuda_order_pinned_to_the_pci_bus():
    assert _child_sees({"KEEP": "yes", "CUDA_DEVICE_ORDER": "FASTEST_FIRST"}) == ["PCI_BUS_ID yes"]
    assert _child_sees(None)[0].startswith("PCI_BUS_ID")


def test_pinning_leaves_the_given_environment_alone():
    env = {"CUDA_VISIBLE_DEVICES": "1"}
    assert pinned_gpu_order(env) == {"CUDA_VISIBLE_DEVICES": "1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    assert env == {"CUDA_VISIBLE_DEVICES": "1"}
