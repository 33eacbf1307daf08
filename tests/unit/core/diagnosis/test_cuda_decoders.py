"""CUDA failures decoded from recorded log lines (tests/data/nvidia/, each line from a public issue thread quoted in
tests/data/nvidia/SOURCES.md): one sentence, the next step and the fix as data, in both languages."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.diagnosis import CAUSES, diagnose
from app.core.diagnosis.cuda_causes import cuda13_on_old_card
from app.core.launch.config import LaunchConfig
from app.core.launch.cuda_facts import CardFacts

DATA = Path(__file__).parents[3] / "data" / "nvidia"
SIGABRT = -6  # llama.cpp's GGML_ABORT after a CUDA error (FACTS.md: CUDA runtime errors -> SIGABRT)


def recorded(name: str) -> list[str]:
    return (DATA / name).read_text(encoding="utf-8").splitlines()


def external(**changes) -> LaunchConfig:
    return LaunchConfig(model="/m/model.gguf", backend="llama-server", server_bin="/e/llama-server", **changes)


@pytest.mark.parametrize(("recording", "code"), [
    ("driver_insufficient.log", SIGABRT),  # abetlen/llama-cpp-python#1436
    ("driver_insufficient_init.log", 1),  # ollama/ollama#7666
    ("ptx_toolchain.log", SIGABRT),  # ggml-org/llama.cpp#5845
    ("unsupported_display_driver.log", 1),  # ggml-org/llama.cpp#17542
])
def test_driver_older_than_the_builds_cuda_runtime(recording, code):
    result = diagnose(code, recorded(recording), external())
    assert result.cause == "cuda_driver_too_old"
    assert result.message.render("en") == ("The NVIDIA driver is older than the CUDA version this llama.cpp build was "
                                           "made with, so the graphics card could not be used.")
    step = result.next_step.render("en")
    assert "525 or newer for a CUDA 12 build" in step and "580 or newer for CUDA 13" in step
    assert "CUDA 12 or Vulkan build" in step
    assert "580" in result.next_step.render("zh") and "驱动" in result.message.render("zh")
    assert result.action is not None and result.action.changes == {"backend": "embedded"}
    assert not result.restartable
    assert result.evidence[0] in recorded(recording)


def test_no_cuda_capable_device():  # abetlen/llama-cpp-python#1890
    result = diagnose(1, recorded("no_device.log"), external())
    assert result.cause == "cuda_no_device"
    assert "CUDA found no NVIDIA graphics card" in result.message.render("en")
    assert "NVIDIA 驱动" in result.next_step.render("zh")


def test_other_ggml_cuda_init_failure_names_cudas_reason():  # meta-llama/llama3#215
    result = diagnose(1, recorded("init_error.log"), external())
    assert result.cause == "cuda_init_failed"
    assert result.message.render("en") == ("CUDA could not start (initialization error), so the graphics card could "
                                           "not be used.")
    assert "initialization error" in result.message.render("zh")


def test_no_kernel_image_for_this_card():  # boneylizard/llama-cpp-python-cu128-gemma3#6
    result = diagnose(SIGABRT, recorded("no_kernel_image.log"), external())
    assert result.cause == "cuda_card_unsupported"
    assert "CUDA 12 build for cards older than compute capability 7.5" in result.next_step.render("en")


def test_linux_cuda_runtime_missing():  # ollama/ollama#602
    result = diagnose(127, recorded("libcudart_missing.log"), external())
    assert result.cause == "cuda_runtime_missing"
    assert result.message.render("en") == ("The CUDA runtime library libcudart.so.12 that this llama.cpp build needs "
                                           "is missing.")
    assert result.next_step.render("en").startswith("Install NVIDIA's CUDA 12 runtime libraries")


def test_windows_cuda_runtime_dll_missing_names_the_zip_to_unpack():  # janhq/jan#6960
    result = diagnose(0xC0000135, recorded("cudart_dll_missing.log"), external())
    assert result.cause == "cuda_runtime_missing"
    assert "cudart64_12.dll" in result.message.render("en")
    assert "cudart-llama-bin-win-cuda-12.4-x64.zip" in result.next_step.render("en")
    assert "cudart-llama-bin-win-cuda-12.4-x64.zip" in result.next_step.render("zh")


def test_every_cuda_cause_is_listed():
    assert {"cuda_runtime_missing", "cuda_driver_too_old", "cuda_card_unsupported", "cuda_no_device",
            "cuda_init_failed"} <= set(CAUSES)


GTX1070 = CardFacts("NVIDIA GeForce GTX 1070", "6.1", "581.57", "13.0")
RTX3060 = CardFacts("NVIDIA GeForce RTX 3060", "8.6", "581.57", "13.0")
# llama.cpp#22748's load_backend lines without the CUDA one (the FluidVoice#988 case: ggml-cuda.dll never loads)
CPU_ONLY_LINES = ["load_backend: loaded RPC backend from C:\\Apps\\llamacpp\\ggml-rpc.dll",
                  "load_backend: loaded CPU backend from C:\\Apps\\llamacpp\\ggml-cpu-haswell.dll",
                  "warning: no usable GPU found, --gpu-layers option will be ignored"]


def test_cuda13_build_on_a_pascal_card_is_said_to_run_on_the_processor():
    found = cuda13_on_old_card(GTX1070, "13.3", CPU_ONLY_LINES)
    assert found is not None
    message, step = found
    assert message.render("en") == ("The model runs on the processor: this llama.cpp is a CUDA 13 build, and CUDA 13 "
                                    "does not support the NVIDIA GeForce GTX 1070 (compute capability 6.1; it needs "
                                    "7.5 or newer).")
    assert "cuda-12.4" in step.render("en") and "CUDA 12" in step.render("zh")


@pytest.mark.parametrize(("card", "version", "lines"), [
    (RTX3060, "13.3", CPU_ONLY_LINES),  # a Turing-or-newer card: CUDA 13 supports it
    (GTX1070, "12.4", CPU_ONLY_LINES),  # a CUDA 12 build
    (GTX1070, None, CPU_ONLY_LINES),  # the build's CUDA version unknown: nothing proven
    (CardFacts("NVIDIA GeForce GTX 1070"), "13.3", CPU_ONLY_LINES),  # NVML gave no compute capability
    (GTX1070, "13.3", recorded("no_usable_gpu_warning_with_cuda.log")),  # llama.cpp#22748: CUDA loaded and in use
])
def test_cpu_fallback_is_not_claimed_without_all_the_evidence(card, version, lines):
    assert cuda13_on_old_card(card, version, lines) is None
