"""llama.cpp's "no usable GPU found" warning is no proof of the processor when the same log shows a GPU backend
loaded with its card: ggml-org/llama.cpp#22748 (b9049, RTX 5060 Laptop) prints it with the CUDA backend in use
(tests/data/nvidia/no_usable_gpu_warning_with_cuda.log, quoted in tests/data/nvidia/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

from app.core.diagnosis.offload import offload_diagnosis, read_offload

RECORDING = Path(__file__).parents[3] / "data" / "nvidia" / "no_usable_gpu_warning_with_cuda.log"


def test_the_warning_with_the_cuda_backend_loaded_claims_nothing():
    lines = RECORDING.read_text(encoding="utf-8").splitlines()
    assert read_offload(lines).no_gpu_warning and read_offload(lines).gpu_backend_loaded
    assert offload_diagnosis(lines, asked=-1, backends=("CPU", "CUDA")) is None


def test_the_warning_without_any_gpu_backend_loaded_still_counts():
    lines = [line for line in RECORDING.read_text(encoding="utf-8").splitlines()
             if "CUDA" not in line and "Device 0" not in line]
    diagnosis = offload_diagnosis(lines, asked=-1, backends=("CPU", "CUDA"))
    assert diagnosis is not None and diagnosis.message.render("en").startswith("The engine put no model layer")
