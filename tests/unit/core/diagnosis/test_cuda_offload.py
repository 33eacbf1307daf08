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


def test_a_cuda13_build_on_a_pascal_card_names_the_reason_for_none_on_the_gpu():
    """altic-dev/FluidVoice#988: a GTX 1070 (CC 6.1) with llama.cpp's win-cuda-13.3 build: ggml-cuda.dll never loads.
    The log lines are llama.cpp#22748's load_backend lines without the CUDA one."""
    from app.core.launch.cuda_facts import CardFacts

    lines = ["load_backend: loaded RPC backend from C:\\llama\\ggml-rpc.dll",
             "load_backend: loaded CPU backend from C:\\llama\\ggml-cpu-haswell.dll",
             "warning: no usable GPU found, --gpu-layers option will be ignored"]
    card = CardFacts("NVIDIA GeForce GTX 1070", "6.1", "581.57", "13.0")
    diagnosis = offload_diagnosis(lines, asked=-1, backends=("CPU", "CUDA"), card=card, build_cuda="13.3")
    assert diagnosis is not None
    assert diagnosis.message.render("en").startswith("The model runs on the processor: this llama.cpp is a CUDA 13 "
                                                     "build, and CUDA 13 does not support the NVIDIA GeForce GTX 1070")
    assert "engine CUDA version: 13.3" in diagnosis.evidence
    plain = offload_diagnosis(lines, asked=-1, backends=("CPU", "CUDA"), card=card, build_cuda="12.4")
    assert plain is not None and plain.message.render("en").startswith("The engine put no model layer")
