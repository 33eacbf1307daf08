"""`doctor` says when an NVIDIA GPU is here but the chosen engine has no GPU backend, with the fixes it found.

The NVIDIA card is simulated (this machine has none); the built-in engine is the real CPU-only one, the finder runs
on a temporary HOME with a planted CUDA llama-server, and a stand-in nvcc is on PATH (only looked for)."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

from app.cli import main
from app.core.hardware import scan
from app.core.hardware.gpu import GpuInfo
from app.core.launch import discovery
from tests.fakes.planted_servers import CUDA_VERSION, plant, plant_tool

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the planted programs are POSIX shell scripts")
CARD = GpuInfo(0, "NVIDIA GeForce RTX 2080", None, 8 << 30, 7 << 30, 1 << 30)


@pytest.fixture
def nvidia_machine(monkeypatch, tmp_path):
    real = scan.scan_hardware
    monkeypatch.setattr(scan, "scan_hardware", lambda *a, **k: dataclasses.replace(real(*a, **k), gpus=[CARD]))
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    discovery.clear_cache()
    yield home
    discovery.clear_cache()


def test_doctor_warns_and_lists_the_fixes(capsys, tiny_model, nvidia_machine, tmp_path, monkeypatch):
    server = plant(nvidia_machine / "Downloads" / "llama-b6500-bin-ubuntu-cuda-x64" / "llama-server", CUDA_VERSION)
    plant_tool(tmp_path / "tools", "nvcc")
    monkeypatch.setenv("PATH", f"{tmp_path / 'tools'}{os.pathsep}{os.environ['PATH']}")
    main(["doctor", str(tiny_model), "--no-sha256", "--backend", "embedded", "--json"])
    doc = json.loads(capsys.readouterr().out)
    row = next(c for c in doc["checks"] if c["id"] == "engine_gpu")
    assert row["status"] == "warning"  # a warning: the model still runs, only slower
    assert "built-in engine was built without graphics-card support" in row["message"]
    assert [fix["action"] for fix in doc["gpu_engine"]["fixes"]] == ["switch_engine", "rebuild_engine"]
    assert doc["gpu_engine"]["fixes"][0]["server_bin"] == str(server)
    assert doc["gpu_engine"]["fixes"][1]["gpu"] == "cuda"

    main(["doctor", str(tiny_model), "--no-sha256", "--backend", "embedded"])
    out = capsys.readouterr().out
    assert "NVIDIA graphics card (NVIDIA GeForce RTX 2080)" in out
    assert f"-> use it: --backend llama-server --server-bin {server}" in out
    assert "--only llama-cpp-python --gpu cuda" in out


def test_doctor_with_nothing_to_offer_says_what_to_install(capsys, tiny_model, nvidia_machine, monkeypatch):
    monkeypatch.setattr("app.core.engine.gpu_build.available_gpu_builds", lambda: [])
    main(["doctor", str(tiny_model), "--no-sha256", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["gpu_engine"]["fixes"] == [] and "llama.cpp release built for your graphics card" in \
        doc["gpu_engine"]["fix"]


def test_doctor_without_an_nvidia_gpu_says_nothing_about_it(capsys, tiny_model, monkeypatch):
    monkeypatch.setattr(scan, "scan_hardware", lambda *a, real=scan.scan_hardware, **k:
                        dataclasses.replace(real(*a, **k), gpus=[]))
    main(["doctor", str(tiny_model), "--no-sha256", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["gpu_engine"] is None and "engine_gpu" not in {c["id"] for c in doc["checks"]}
