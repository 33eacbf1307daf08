"""The GPU llama-server finder on a temporary HOME with planted programs: llama.cpp release zips in Downloads and
the home folder, a source build, Jan's and LM Studio's backends, PATH. Only builds that say they have a GPU
backend are kept. The planted programs are tiny shell scripts answering --version/--help like llama-server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.core.launch import discovery, fetched_engines, gpu_servers
from tests.fakes.planted_servers import CPU_VERSION, CUDA_VERSION, VULKAN_VERSION, plant

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the planted programs are POSIX shell scripts")


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", os.pathsep.join([str(tmp_path / "empty-path"), "/usr/bin", "/bin"]))  # sh needs cat
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("APPDATA", raising=False)
    monkeypatch.setattr(gpu_servers, "search_roots", lambda h=None: [(h or home) / "Downloads", h or home])
    monkeypatch.setattr(discovery, "common_locations", lambda: [])
    discovery.clear_cache()
    yield home
    discovery.clear_cache()


def test_finds_only_the_builds_that_can_use_a_graphics_card(home):
    release = plant(home / "Downloads" / "llama-b6500-bin-ubuntu-cuda-x64" / "build" / "bin" / "llama-server",
                    CUDA_VERSION)
    plant(home / "llama.cpp" / "build" / "bin" / "llama-server", CPU_VERSION)  # a CPU-only source build
    jan = plant(home / ".local" / "share" / "Jan" / "data" / "llamacpp" / "backends" / "b6400" / "linux-vulkan-x64"
                / "build" / "bin" / "llama-server", VULKAN_VERSION)
    lmstudio = plant(home / ".lmstudio" / "extensions" / "backends"
                     / "llama.cpp-linux-x86_64-nvidia-cuda-avx2-1.50.0" / "llama-server", CUDA_VERSION)
    plant(home / "Downloads" / "llama-tools" / "llama-server", CUDA_VERSION, is_server=False)  # not llama-server

    found = {Path(server.path): server for server in gpu_servers.find_gpu_servers()}
    assert set(found) == {release, jan, lmstudio}
    assert found[release].gpu_backends == ("CUDA",) and found[jan].gpu_backends == ("Vulkan",)
    assert found[release].version_text == "version: 6500 (3e8f1a2c)"


def test_a_gpu_library_next_to_the_program_counts(home):
    """Builds with backends as loadable libraries may print nothing about CUDA without a driver."""
    program = plant(home / "llama-b6500-bin-win-cuda-x64" / "llama-server", CPU_VERSION)
    (program.parent / "libggml-cuda.so").write_bytes(b"")
    (program.parent / "libggml-cpu.so").write_bytes(b"")
    assert [(s.path, s.gpu_backends) for s in gpu_servers.find_gpu_servers()] == [(str(program), ("CUDA",))]


def test_path_comes_first_and_a_file_is_listed_once(home, tmp_path, monkeypatch):
    on_path = plant(tmp_path / "bin" / "llama-server", VULKAN_VERSION)
    (home / "Downloads").mkdir()
    os.symlink(on_path.parent, home / "Downloads" / "llama-linked")
    monkeypatch.setenv("PATH", os.pathsep.join([str(on_path.parent), "/usr/bin", "/bin"]))
    found = gpu_servers.find_gpu_servers()
    assert [s.path for s in found] == [str(on_path)]


def test_an_empty_home_finds_nothing(home):
    assert gpu_servers.find_gpu_servers() == []


def test_a_build_the_app_fetched_and_checked_comes_first(home, tmp_path, monkeypatch):
    """The launcher of a build listed in engines.json (hub/engine_fetch.py) is offered before PATH and Downloads."""
    on_path = plant(tmp_path / "bin" / "llama-server", VULKAN_VERSION)
    monkeypatch.setenv("PATH", os.pathsep.join([str(on_path.parent), "/usr/bin", "/bin"]))
    downloaded = plant(home / "Downloads" / "llama-b6500-bin-ubuntu-cuda-x64" / "llama-server", CUDA_VERSION)
    folder = fetched_engines.engines_folder() / "llama-b11434-ubuntu-cuda-13.4-x64"
    fetched = plant(folder / "llama-server", CUDA_VERSION)
    fetched_engines.register("cuda-13", "CUDA 13.4", "b11434", folder, fetched,
                             "CUDA0: NVIDIA GeForce RTX 3080 Ti (11909 MiB, 11650 MiB free)")

    assert gpu_servers.candidate_files() == [fetched, on_path, downloaded]
    assert [server.path for server in gpu_servers.find_gpu_servers()] == [str(fetched), str(on_path), str(downloaded)]

    fetched_engines.remove_engine("cuda-13")  # removed: no longer offered
    assert gpu_servers.candidate_files() == [on_path, downloaded]
