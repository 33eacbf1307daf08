"""No silent CPU fallback: an NVIDIA GPU and an engine without a GPU backend is said before the user starts, in
the one problem shape, with every fix as data (app/core/launch/gpu_engine.py)."""

from __future__ import annotations

import pytest

from app.core.engine.gpu_build import GpuBuild
from app.core.hardware.gpu import GpuInfo
from app.core.hardware.report import HardwareReport
from app.core.launch import gpu_engine
from app.core.launch.gpu_servers import GpuServer
from app.core.problem import Fix, Problem, Status
from app.core.text import T

GIB = 1024**3
CARD = GpuInfo(0, "NVIDIA GeForce RTX 2080", None, 8 * GIB, 7 * GIB, 1 * GIB)
SERVER = GpuServer("/home/li/Downloads/llama-b6500-bin-ubuntu-cuda-x64/build/bin/llama-server",
                   "version: 6500 (3e8f1a2c)", ("CUDA",))
CUDA = GpuBuild("cuda", "/usr/local/cuda/bin/nvcc")


def machine(*gpus: GpuInfo) -> HardwareReport:
    return HardwareReport("Linux", "6", False, False, False, None, 64 * GIB, 64 * GIB, "test", 8, 16, [], list(gpus),
                          [])


def warn(engine="embedded", backends=("CPU",), *, servers=(), builds=(), gpus=(CARD,), **kw):
    return gpu_engine.cpu_only_engine_warning(machine(*gpus), engine, backends, servers=list(servers),
                                              builds=list(builds), **kw)


def test_no_nvidia_gpu_or_a_gpu_engine_says_nothing():
    assert warn(gpus=()) is None
    assert warn(backends=("CPU", "CUDA")) is None
    assert warn(engine="llama-server", backends=("CPU", "Vulkan")) is None


def test_a_cpu_only_built_in_engine_offers_the_found_server_and_a_cuda_rebuild():
    warning = warn(servers=[SERVER], builds=[CUDA])
    assert isinstance(warning, Problem)
    assert warning.message.render("en") == (
        "This computer has an NVIDIA graphics card (NVIDIA GeForce RTX 2080), but the built-in engine was built "
        "without graphics-card support: every model would run on the processor only, many times slower.")
    assert "NVIDIA" in warning.message.render("zh") and "显卡" in warning.message.render("zh")
    assert warning.next_step.render("en") == ("Use a llama-server found on this computer that can use the card, or "
                                              "rebuild the built-in engine with CUDA (it can take half an hour).")
    use, rebuild = warning.fixes
    assert use.kind is Fix.SWITCH_ENGINE and use.params == {"engine": "llama-server", "server_bin": SERVER.path,
                                                            "backends": "CUDA"}
    assert rebuild.kind is Fix.REBUILD_ENGINE and rebuild.params == {"engine": "embedded", "gpu": "cuda"}
    assert warning.action == use
    assert "GPU 0: NVIDIA GeForce RTX 2080" in warning.evidence and "embedded backends: CPU" in warning.evidence
    assert f"found {SERVER.path} (CUDA)" in warning.evidence
    assert "CUDA compiler: /usr/local/cuda/bin/nvcc" in warning.evidence


PASCAL = GpuInfo(0, "NVIDIA GeForce GTX 1070", None, 8 * GIB, 7 * GIB, 1 * GIB, driver_version="581.57",
                 cuda_driver_version="13.0", compute_capability="6.1")
CUDA13_SERVER = GpuServer("/d/llama-b7000-bin-win-cuda-13.3-x64/llama-server.exe", "version: 7000 (abc)", ("CUDA",),
                          "13.3")
CUDA12_SERVER = GpuServer("/d/llama-b7000-bin-win-cuda-12.4-x64/llama-server.exe", "version: 7000 (abc)", ("CUDA",),
                          "12.4")


def test_a_pascal_card_is_offered_the_cuda_12_server_and_told_why_not_cuda_13():
    """altic-dev/FluidVoice#988: a CUDA 13 build on a GTX 1070 (CC 6.1) silently runs on the CPU."""
    warning = warn(servers=[CUDA13_SERVER, CUDA12_SERVER], gpus=(PASCAL,))
    assert [fix.get("server_bin") for fix in warning.fixes] == [CUDA12_SERVER.path]
    assert warning.next_step.render("en").startswith(
        "The CUDA 12.4 llama-server was chosen: the CUDA 13.3 build needs a card with compute capability 7.5 or "
        "newer, and the NVIDIA GeForce GTX 1070 has 6.1. Use a llama-server found on this computer")
    assert "计算能力 7.5" in warning.next_step.render("zh")
    assert any(line.startswith(f"not offered: {CUDA13_SERVER.path}") for line in warning.evidence)


def test_only_unfit_servers_found_says_why_none_fits_and_offers_none():
    warning = warn(servers=[CUDA13_SERVER], gpus=(PASCAL,))
    assert warning.fixes == ()
    assert warning.next_step.render("en").startswith(
        "None of the llama-server programs found here fits the NVIDIA GeForce GTX 1070: the CUDA 13.3 build needs")


def test_without_any_fix_here_the_next_step_says_what_to_install():
    warning = warn()
    assert warning.fixes == () and warning.action is None
    assert "llama.cpp release built for your graphics card" in warning.next_step.render("en")
    assert "CUDA 工具包" in warning.next_step.render("zh")
    assert "no CUDA (nvcc) or Vulkan (glslc) compiler found" in warning.evidence


def test_no_rebuild_is_offered_where_the_app_cannot_rebuild():
    reason = T("This installed app cannot rebuild its engine.", "这个已安装的应用无法重新构建引擎。")
    warning = warn(servers=[SERVER], builds=[CUDA], cannot_rebuild=reason)
    assert [fix.kind for fix in warning.fixes] == [Fix.SWITCH_ENGINE]
    assert "This installed app cannot rebuild its engine." in warning.evidence


def test_a_cpu_only_llama_server_is_not_offered_itself():
    warning = warn("llama-server", servers=[SERVER], current_server=SERVER.path)
    assert "the chosen llama-server was built without graphics-card support" in warning.message.render("en")
    assert warning.fixes == ()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_check_row_and_json_carry_every_fix(lang):
    warning = warn(servers=[SERVER], builds=[CUDA, GpuBuild("vulkan", "/usr/bin/glslc")])
    check = warning.check()
    assert check.id == "engine_gpu" and check.status is Status.WARNING and check.action == warning.fixes[0]
    data = warning.to_dict(lang)
    assert data["fixes"][0] == {"action": "switch_engine", "engine": "llama-server", "server_bin": SERVER.path,
                                "backends": "CUDA"}
    assert [fix["gpu"] for fix in data["fixes"][1:]] == ["cuda", "vulkan"]
    assert "--" not in data["message"] + data["fix"]  # no command-line flags in the sentences


def test_the_look_up_is_silent_without_an_nvidia_gpu():
    assert gpu_engine.engine_gpu_warning(machine(), "embedded") is None


def test_the_look_up_reads_the_real_built_in_engine(monkeypatch):
    """The pip-built llama-cpp-python here is CPU-only: with a (simulated) NVIDIA card the warning comes."""
    monkeypatch.setattr("app.core.launch.gpu_servers.find_gpu_servers", lambda home=None: [])
    warning = gpu_engine.engine_gpu_warning(machine(CARD), "embedded")
    assert warning is not None and "embedded backends: CPU" in warning.evidence


def _folder(tmp_path, name: str, files: dict[str, bytes]):
    from app.core.launch.engine_folder import check_engine_folder

    folder = tmp_path / name
    folder.mkdir()
    for file, data in files.items():
        (folder / file).write_bytes(data)
    return str(folder / "llama-server.exe"), check_engine_folder(folder / "llama-server.exe", search_dirs=(),
                                                                 linker_cache=b"")


WIN_CUDA13 = {"llama-server.exe": b"MZ\0llama.dll\0ggml.dll\0", "llama.dll": b"MZ\0ggml.dll\0", "ggml.dll": b"MZ\0",
              "ggml-cpu-haswell.dll": b"MZ\0", "cudart64_13.dll": b"MZ\0", "cublas64_13.dll": b"MZ\0",
              "ggml-cuda.dll": b"MZ\0cudart64_13.dll\0cublas64_13.dll\0"}


def test_a_cuda13_llama_server_on_a_pascal_card_is_said_unfit_with_the_cuda12_one_offered(tmp_path):
    """The silent CPU case of altic-dev/FluidVoice#988, said before the user starts."""
    path, folder = _folder(tmp_path, "llama-b7000-bin-win-cuda-13.3-x64", WIN_CUDA13)
    calls = []

    def servers():
        calls.append(1)
        return [CUDA12_SERVER]

    warning = gpu_engine.unfit_engine_warning(machine(PASCAL), path, ("CPU",), folder, servers=servers)
    assert warning is not None and calls == [1]
    assert warning.message.render("en") == (
        "The chosen llama-server cannot use the NVIDIA GeForce GTX 1070: the CUDA 13.3 build needs a card with compute "
        "capability 7.5 or newer, and the NVIDIA GeForce GTX 1070 has 6.1.")
    assert "计算能力 7.5" in warning.message.render("zh")
    assert warning.next_step.render("en").startswith("The CUDA 12.4 llama-server was chosen")
    assert [fix.get("server_bin") for fix in warning.fixes] == [CUDA12_SERVER.path]


def test_a_cuda13_llama_server_on_a_turing_card_is_not_warned_about(tmp_path):
    path, folder = _folder(tmp_path, "llama-b7000-bin-win-cuda-13.3-x64", WIN_CUDA13)
    turing = GpuInfo(0, "NVIDIA GeForce RTX 2060", None, 6 * GIB, 5 * GIB, 1 * GIB, driver_version="581.57",
                     cuda_driver_version="13.0", compute_capability="7.5")
    assert gpu_engine.unfit_engine_warning(machine(turing), path, ("CPU", "CUDA"), folder,
                                           servers=lambda: pytest.fail("no look-up when nothing is unfit")) is None


def test_a_cuda_folder_without_its_runtime_names_the_zip(tmp_path):
    files = {name: data for name, data in WIN_CUDA13.items() if not name.startswith(("cudart", "cublas"))}
    path, folder = _folder(tmp_path, "llama-b7000-bin-win-cuda-13.3-x64", files)
    turing = GpuInfo(0, "NVIDIA GeForce RTX 2060", None, 6 * GIB, 5 * GIB, 1 * GIB, compute_capability="7.5")
    warning = gpu_engine.unfit_engine_warning(machine(turing), path, ("CPU",), folder, servers=list)
    assert warning is not None and warning.fixes == ()
    assert warning.message.render("en") == ("This CUDA build of llama.cpp cannot use the graphics card: the CUDA "
                                            "runtime files it needs are missing (cudart64_13.dll, cublas64_13.dll).")
    assert "cudart-llama-bin-win-cuda-13.3-x64.zip" in warning.next_step.render("en")
