"""CUDA device n -> NVML GPU by UUID: PCI order (pinned for the app's servers), CUDA_VISIBLE_DEVICES, a log's
device lines in another order; and each process's VRAM per GPU by UUID."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from app.core.hardware import gpu as hardware_gpu
from app.core.hardware.device_order import (
    cuda_order,
    cuda_uuids,
    gpu_by_uuid,
    parse_cuda_devices,
    pci_order,
)
from app.core.hardware.gpu import GpuInfo, pci_bus_id
from app.core.hardware.scan import process_vram_by_device, process_vram_bytes, read_gpus

GiB = 1024**3
UUID_3060 = "GPU-5f2c8a1e-0000-1111-2222-333344445555"
UUID_4090 = "GPU-9a0b1c2d-aaaa-bbbb-cccc-ddddeeeeffff"

# ggml_cuda_init as a CUDA build prints it when CUDA orders fastest first: the 4090 (bus 02) before the 3060 (01)
FASTEST_FIRST_LOG = [
    "ggml_cuda_init: found 2 CUDA devices (Total VRAM: 36850 MiB):",
    "  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes, VRAM: 24563 MiB",
    "  Device 1: NVIDIA GeForce RTX 3060, compute capability 8.6, VMM: yes, VRAM: 12287 MiB",
]


def card(index, name, uuid, total_gib, bus):
    return GpuInfo(index, name, uuid, int(total_gib * GiB), int(total_gib * GiB) - GiB, GiB, pci_bus_id=bus)


# NVML numbers by PCI bus: the 3060 in bus 01 is GPU 0
GPUS = [card(0, "NVIDIA GeForce RTX 3060", UUID_3060, 12, "0000:01:00.0"),
        card(1, "NVIDIA GeForce RTX 4090", UUID_4090, 24, "0000:02:00.0")]


def test_nvml_bus_ids_are_spelled_as_cuda_writes_them():
    assert pci_bus_id("00000000:01:00.0") == "0000:01:00.0"
    assert pci_bus_id("0000000A:81:00.0") == "000a:81:00.0"
    assert pci_bus_id(None) is None and pci_bus_id("garbage") is None


def test_log_lines_old_and_new_builds():
    devices = parse_cuda_devices(["0.01.2 I " + FASTEST_FIRST_LOG[1], FASTEST_FIRST_LOG[2],
                                  "  Device 0: NVIDIA GeForce RTX 3060, compute capability 8.6, VMM: yes"])
    assert [(d.index, d.name, d.vram_mib) for d in devices] == [
        (0, "NVIDIA GeForce RTX 4090", 24563), (1, "NVIDIA GeForce RTX 3060", 12287)]  # the first listing wins
    old = parse_cuda_devices(["  Device 0: NVIDIA GeForce RTX 3060, compute capability 8.6, VMM: yes"])
    assert old[0].vram_mib is None


def test_pinned_order_is_the_pci_order_whatever_nvml_listed_first():
    assert [g.uuid for g in cuda_order(list(reversed(GPUS)), {})] == [UUID_3060, UUID_4090]
    assert pci_order([SimpleNamespace(index=1, pci_bus_id=None), GPUS[1]])[0] is GPUS[1]  # no bus id: last


@pytest.mark.parametrize("visible, expected", [
    ("1", [UUID_4090]), ("1,0", [UUID_4090, UUID_3060]), ("GPU-9a0b", [UUID_4090]),
    ("0,7,1", [UUID_3060]), ("", []), ("-1", []), ("MIG-1234", []),
])
def test_cuda_visible_devices_hides_and_reorders(visible, expected):
    assert [g.uuid for g in cuda_order(GPUS, {"CUDA_VISIBLE_DEVICES": visible})] == expected


def test_uuid_mapping_follows_the_log_when_cuda_and_nvml_orders_differ():
    assert cuda_uuids(GPUS, env={}) == [UUID_3060, UUID_4090]  # predicted: pinned PCI order
    assert cuda_uuids(GPUS, env={}, log_lines=FASTEST_FIRST_LOG) == [UUID_4090, UUID_3060]
    unknown = FASTEST_FIRST_LOG[:2] + ["  Device 1: NVIDIA A100, compute capability 8.0, VMM: yes, VRAM: 40000 MiB"]
    assert cuda_uuids(GPUS, env={}, log_lines=unknown) == [UUID_4090, None]
    assert gpu_by_uuid(GPUS, UUID_4090) is GPUS[1] and gpu_by_uuid(GPUS, None) is None


def test_two_equal_cards_keep_the_predicted_order():
    twins = [card(0, "NVIDIA GeForce RTX 3060", "GPU-a", 12, "0000:01:00.0"),
             card(1, "NVIDIA GeForce RTX 3060", "GPU-b", 12, "0000:02:00.0")]
    log = [line.replace("4090", "3060").replace("24563", "12287") for line in FASTEST_FIRST_LOG]
    assert cuda_uuids(twins, env={}, log_lines=log) == ["GPU-a", "GPU-b"]
    assert cuda_uuids(twins, env={"CUDA_VISIBLE_DEVICES": "1,0"}, log_lines=log) == ["GPU-b", "GPU-a"]


def _install_two_gpu_nvml(monkeypatch, processes_by_handle):
    import pynvml

    def not_supported(*_):
        raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)

    uuids = {"h0": UUID_3060, "h1": UUID_4090}
    answers = {
        "nvmlInit": lambda: None,
        "nvmlDeviceGetCount": lambda: 2,
        "nvmlDeviceGetHandleByIndex": lambda i: f"h{i}",
        "nvmlDeviceGetName": lambda h: {"h0": b"NVIDIA GeForce RTX 3060", "h1": b"NVIDIA GeForce RTX 4090"}[h],
        "nvmlDeviceGetUUID": lambda h: uuids[h],
        "nvmlDeviceGetPciInfo": lambda h: SimpleNamespace(busId={"h0": b"00000000:01:00.0",
                                                                 "h1": b"00000000:02:00.0"}[h]),
        "nvmlDeviceGetMemoryInfo": lambda h: SimpleNamespace(total=12 * GiB, free=9 * GiB, used=3 * GiB),
        "nvmlDeviceGetCudaComputeCapability": lambda h: (8, 6),
        "nvmlSystemGetDriverVersion": lambda: "550.54.14",
        "nvmlSystemGetCudaDriverVersion": lambda: 12040,
        "nvmlDeviceGetComputeRunningProcesses": lambda h: processes_by_handle[h],
        "nvmlDeviceGetGraphicsRunningProcesses": not_supported,
        "nvmlDeviceGetGraphicsRunningProcesses_v2": not_supported,
        "nvmlSystemGetProcessName": not_supported,
    }
    for name, answer in answers.items():
        monkeypatch.setattr(pynvml, name, answer, raising=False)


@pytest.fixture(autouse=True)
def fresh_nvml():
    """Each test starts with NVML not yet initialised, and leaves it that way."""
    hardware_gpu._nvml.forget()
    yield
    hardware_gpu._nvml.forget()


def test_process_vram_per_gpu_by_uuid(monkeypatch):
    own = os.getpid()
    _install_two_gpu_nvml(monkeypatch, {"h0": [SimpleNamespace(pid=own, usedGpuMemory=GiB)],
                                        "h1": [SimpleNamespace(pid=own, usedGpuMemory=3 * GiB)]})
    assert process_vram_by_device(own) == {UUID_3060: GiB, UUID_4090: 3 * GiB}
    assert process_vram_bytes(own) == 4 * GiB
    assert [g.pci_bus_id for g in read_gpus()] == ["0000:01:00.0", "0000:02:00.0"]


def test_process_vram_per_gpu_is_none_when_nvml_cannot_say(monkeypatch):
    parent = os.getppid()  # a process that exists here, listed without a size
    _install_two_gpu_nvml(monkeypatch, {"h0": [SimpleNamespace(pid=parent, usedGpuMemory=None)], "h1": []})
    assert process_vram_by_device(parent) is None and process_vram_bytes(parent) is None
    assert process_vram_by_device(os.getpid()) == {UUID_3060: 0, UUID_4090: 0}
