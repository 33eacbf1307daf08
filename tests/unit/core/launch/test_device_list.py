"""``--list-devices`` read from recorded outputs (tests/data/list_devices/SOURCES.md says where each comes from)."""

from __future__ import annotations

from pathlib import Path

from app.core.launch.device_list import ListedDevice, card_device, list_devices, parse_device_list

DATA = Path(__file__).resolve().parents[3] / "data" / "list_devices"


def recorded(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def test_a_cuda_build_lists_each_card_and_the_log_after_it_is_not_a_device():
    devices = parse_device_list(recorded("ollama_16508_cuda.txt"))
    assert devices == (ListedDevice("CUDA0", "NVIDIA GeForce RTX 3080 Ti", 11909, 11650),
                       ListedDevice("CUDA1", "NVIDIA RTX PRO 4000 Blackwell SFF Edition", 24026, 23795))
    assert card_device(devices, "NVIDIA GeForce RTX 3080 Ti", "CUDA") == devices[0]
    assert card_device(devices, "NVIDIA GeForce RTX 3080 Ti", "Vulkan") is None  # another backend's device
    assert card_device(devices, "NVIDIA GeForce RTX 3070", "CUDA") is None


def test_the_vulkan_release_build_names_the_card_as_nvml_does():
    devices = parse_device_list(recorded("llama_cpp_15793_vulkan_windows.txt"))
    assert devices == (ListedDevice("Vulkan0", "NVIDIA GeForce RTX 4060 Laptop GPU", 7957, 7189),)
    assert card_device(devices, "NVIDIA GeForce RTX 4060 Laptop GPU", "Vulkan") == devices[0]
    assert devices[0].line == "Vulkan0: NVIDIA GeForce RTX 4060 Laptop GPU (7957 MiB, 7189 MiB free)"
    freebsd = parse_device_list(recorded("llama_cpp_16659_vulkan_freebsd.txt"))
    assert freebsd is not None and card_device(freebsd, "nvidia geforce  RTX 2060", "vulkan") == freebsd[0]


def test_none_is_an_empty_list_and_no_header_is_no_answer():
    assert parse_device_list(recorded("b11434_cpu_none.txt")) == ()
    assert parse_device_list("error: invalid argument: --list-devices\n") is None


def test_the_pinned_cpu_build_answers_none(llama_server_bin):
    listing = list_devices(Path(llama_server_bin))
    assert listing.returncode == 0 and listing.devices == ()


def test_a_program_that_cannot_run_is_no_list(tmp_path):
    listing = list_devices(tmp_path / "llama-server")
    assert listing.devices is None and listing.returncode is None and listing.tail
