"""The engine-folder check on fake layouts of llama.cpp's official archives.

File lists from .github/workflows/release.yml at ggml-org/llama.cpp commit 002efcd4e56d7e23bf53fb472a15bdb493f223d1:
windows-cpu packs ``build\\bin\\Release\\*`` of a GGML_BACKEND_DL + GGML_CPU_ALL_VARIANTS build plus
libomp140.x86_64.dll; windows (vulkan) and windows-cuda (12.4, 13.3) pack only ggml-vulkan.dll / ggml-cuda.dll, to
which the release job adds the CPU zip's files; the CUDA runtime is cudart-llama-bin-win-cuda-<ver>-x64.zip with
``cudart64_*.dll cublas64_*.dll cublasLt64_*.dll``; ubuntu-cpu / ubuntu-vulkan tar ``build/bin`` under llama-<tag>/.
Each fake file holds the library names its real counterpart imports (PE import table / ELF DT_NEEDED are plain text).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.launch.engine_folder import check_engine_folder, find_launcher, quick_cuda_version

WIN_CPU = {
    "llama-server.exe": b"MZ\0llama-server-impl.dll\0KERNEL32.dll\0",
    "llama-server-impl.dll": b"MZ\0llama-common.dll\0llama.dll\0ggml.dll\0ggml-base.dll\0mtmd.dll\0",
    "llama-common.dll": b"MZ\0llama.dll\0ggml.dll\0ggml-base.dll\0",
    "llama.dll": b"MZ\0ggml.dll\0ggml-base.dll\0",
    "mtmd.dll": b"MZ\0llama.dll\0ggml.dll\0ggml-base.dll\0",
    "ggml.dll": b"MZ\0ggml-base.dll\0",
    "ggml-base.dll": b"MZ\0",
    "ggml-cpu-haswell.dll": b"MZ\0ggml-base.dll\0libomp140.x86_64.dll\0",
    "ggml-cpu-skylakex.dll": b"MZ\0ggml-base.dll\0libomp140.x86_64.dll\0",
    "ggml-cpu-x64.dll": b"MZ\0ggml-base.dll\0libomp140.x86_64.dll\0",
    "ggml-rpc.dll": b"MZ\0ggml-base.dll\0",
    "libomp140.x86_64.dll": b"MZ\0",
    "llama-cli.exe": b"MZ\0llama-cli-impl.dll\0",
    "llama-cli-impl.dll": b"MZ\0llama-common.dll\0",
}
WIN_VULKAN = {**WIN_CPU, "ggml-vulkan.dll": b"MZ\0ggml-base.dll\0vulkan-1.dll\0"}


def cuda_zip(major: str) -> dict[str, bytes]:
    names = f"cudart64_{major}.dll\0cublas64_{major}.dll\0cublasLt64_{major}.dll\0".encode()
    return {**WIN_CPU, "ggml-cuda.dll": b"MZ\0ggml-base.dll\0" + names + b"nvcuda.dll\0"}


def cudart_zip(major: str) -> dict[str, bytes]:
    return {f"cudart64_{major}.dll": b"MZ\0", f"cublas64_{major}.dll": b"MZ\0cublasLt64_" + major.encode() + b".dll",
            f"cublasLt64_{major}.dll": b"MZ\0"}


UBUNTU_CPU = {
    "llama-server": b"\x7fELF\0libllama-server-impl.so\0libc.so.6\0",
    "libllama-server-impl.so": b"\x7fELF\0libllama-common.so\0libllama.so\0libggml.so\0libggml-base.so\0libmtmd.so\0",
    "libllama-common.so": b"\x7fELF\0libllama.so\0libggml.so\0libggml-base.so\0",
    "libllama.so": b"\x7fELF\0libggml.so\0libggml-base.so\0",
    "libmtmd.so": b"\x7fELF\0libllama.so\0libggml.so\0",
    "libggml.so": b"\x7fELF\0libggml-base.so\0",
    "libggml-base.so": b"\x7fELF\0",
    "libggml-cpu-haswell.so": b"\x7fELF\0libggml-base.so\0libgomp.so.1\0",
    "libggml-cpu-x64.so": b"\x7fELF\0libggml-base.so\0libgomp.so.1\0",
    "libggml-rpc.so": b"\x7fELF\0libggml-base.so\0",
    "LICENSE": b"MIT",
}
UBUNTU_VULKAN = {**UBUNTU_CPU, "libggml-vulkan.so": b"\x7fELF\0libggml-base.so\0libvulkan.so.1\0"}


def unpack(root: Path, folder: str, *layouts: dict[str, bytes]) -> Path:
    target = root / folder
    target.mkdir(parents=True)
    for layout in layouts:
        for name, data in layout.items():
            (target / name).write_bytes(data)
    return target


def check(folder: Path, name: str = "llama-server.exe", dirs: tuple[Path, ...] = ()):
    return check_engine_folder(folder / name, search_dirs=dirs, linker_cache=b"")


@pytest.mark.parametrize(("folder", "layouts", "backends"), [
    ("llama-b7000-bin-win-cpu-x64", (WIN_CPU,), ("CPU",)),
    ("llama-b7000-bin-win-vulkan-x64", (WIN_VULKAN,), ("CPU", "Vulkan")),
])
def test_complete_windows_zips_pass(tmp_path, folder, layouts, backends):
    result = check(unpack(tmp_path, folder, *layouts))
    assert result.ok, result.missing
    assert set(result.backends) == set(backends)
    assert result.problem() is None


@pytest.mark.parametrize(("version", "major"), [("12.4", "12"), ("13.3", "13")])
def test_cuda_zip_with_its_runtime_zip_passes_and_knows_its_cuda_version(tmp_path, version, major):
    folder = unpack(tmp_path, f"llama-b7000-bin-win-cuda-{version}-x64", cuda_zip(major), cudart_zip(major))
    result = check(folder)
    assert result.ok, result.missing
    assert "CUDA" in result.backends
    assert result.cuda_version == version


def test_cuda_zip_without_the_runtime_zip_names_the_missing_dlls_and_the_zip_to_get(tmp_path):
    folder = unpack(tmp_path, "llama-b7000-bin-win-cuda-12.4-x64", cuda_zip("12"))
    result = check(folder)
    assert result.missing == ("cudart64_12.dll", "cublas64_12.dll", "cublasLt64_12.dll")
    assert result.missing_cuda_runtime == result.missing
    problem, step = result.problem(), result.next_step()
    assert problem is not None and step is not None
    assert "CUDA runtime files" in problem.render("en") and "CUDA 运行库" in problem.render("zh")
    assert "cudart-llama-bin-win-cuda-12.4-x64.zip" in step.render("en")
    assert "cudart-llama-bin-win-cuda-12.4-x64.zip" in step.render("zh")


def test_cuda_runtime_on_path_counts_as_present(tmp_path):
    folder = unpack(tmp_path, "llama-b7000-bin-win-cuda-13.3-x64", cuda_zip("13"))
    toolkit = unpack(tmp_path, "CUDA/v13.3/bin", cudart_zip("13"))
    assert check(folder, dirs=(toolkit,)).ok


def test_thin_launcher_without_its_impl_library_is_refused(tmp_path):
    folder = unpack(tmp_path, "llama-b7000-bin-win-vulkan-x64", WIN_VULKAN)
    (folder / "llama-server-impl.dll").unlink()
    result = check(folder)
    assert result.missing == ("llama-server-impl.dll",)
    problem = result.problem()
    assert problem is not None and "llama-server-impl.dll is missing" in problem.render("en")


def test_removed_common_library_is_found_through_the_impl_library(tmp_path):
    folder = unpack(tmp_path, "llama-b7000-bin-win-cpu-x64", WIN_CPU)
    (folder / "llama-common.dll").unlink()
    assert check(folder).missing == ("llama-common.dll",)


def test_backend_dl_build_without_any_cpu_backend_is_refused(tmp_path):
    folder = unpack(tmp_path, "llama-b7000-bin-win-cuda-12.4-x64", cuda_zip("12"), cudart_zip("12"))
    for dll in folder.glob("ggml-cpu-*.dll"):
        dll.unlink()
    assert check(folder).missing == ("ggml-cpu-*.dll",)


@pytest.mark.parametrize(("layout", "backends"), [(UBUNTU_CPU, ("CPU",)), (UBUNTU_VULKAN, ("CPU", "Vulkan"))])
def test_ubuntu_tarballs_pass(tmp_path, layout, backends):
    result = check(unpack(tmp_path, "llama-b7000", layout), "llama-server")
    assert result.ok, result.missing
    assert set(result.backends) == set(backends)


def test_ubuntu_vulkan_without_its_cpu_backends_and_ggml_is_refused(tmp_path):
    folder = unpack(tmp_path, "llama-b7000", UBUNTU_VULKAN)
    for lib in [*folder.glob("libggml-cpu-*.so"), folder / "libggml.so"]:
        lib.unlink()
    assert set(check(folder, "llama-server").missing) == {"libggml.so"}


def test_linux_cuda_build_finds_its_runtime_through_the_linker_cache_or_says_it_is_missing(tmp_path):
    folder = unpack(tmp_path, "llama.cpp/build/bin", UBUNTU_CPU,
                    {"libggml-cuda.so": b"\x7fELF\0libggml-base.so\0libcudart.so.12\0libcublas.so.12\0"})
    missing = check_engine_folder(folder / "llama-server", search_dirs=(), linker_cache=b"")
    assert missing.missing == ("libcudart.so.12", "libcublas.so.12")
    assert missing.cuda_version == "12"
    step = missing.next_step()
    assert step is not None and "CUDA 12 runtime" in step.render("en")
    cache = b"\0libcudart.so.12\0/usr/local/cuda/lib64/libcudart.so.12\0libcublas.so.12\0"
    assert check_engine_folder(folder / "llama-server", search_dirs=(), linker_cache=cache).ok


def test_single_llama_program_is_the_launcher_when_there_is_no_llama_server(tmp_path):
    folder = unpack(tmp_path, "llama-b9000", {k: v for k, v in UBUNTU_CPU.items() if k != "llama-server"},
                    {"llama": b"\x7fELF\0libllama-common.so\0libllama.so\0libggml.so\0"})
    launcher = find_launcher(folder)
    assert launcher == folder / "llama"
    assert check_engine_folder(launcher, search_dirs=(), linker_cache=b"").ok


def test_missing_launcher_is_reported(tmp_path):
    folder = unpack(tmp_path, "empty", {"ggml.dll": b"MZ"})
    assert check(folder).missing == ("llama-server.exe",)


def test_quick_cuda_version_reads_names_only(tmp_path):
    release = unpack(tmp_path, "llama-b7000-bin-win-cuda-13.3-x64", cuda_zip("13"), cudart_zip("13"))
    assert quick_cuda_version(release / "llama-server.exe") == "13.3"
    renamed = unpack(tmp_path, "engine", cuda_zip("12"), cudart_zip("12"))
    assert quick_cuda_version(renamed / "llama-server.exe") == "12"
    assert quick_cuda_version(unpack(tmp_path, "cpu", WIN_CPU) / "llama-server.exe") is None
