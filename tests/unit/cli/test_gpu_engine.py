"""`gguf-launcher gpu-engine {plan,get,list,remove}`: its sentences and exit codes (the fetch itself is tested
against a loopback release stand-in in tests/integration/hub/test_engine_fetch.py)."""

from __future__ import annotations

import json

import pytest

from app.cli import main
from app.core.hardware import gpu as hardware_gpu
from app.core.hardware.gpu import GpuInfo
from app.core.launch import fetched_engines
from app.core.launch.release_builds import official_source, platform_key, release_builds


def simulated_card(monkeypatch):
    card = GpuInfo(0, "NVIDIA GeForce RTX 3080 Ti", None, 12 << 30, 11 << 30, 1 << 30, driver_version="580.82.07",
                   cuda_driver_version="13.0", compute_capability="8.6")
    monkeypatch.setattr(hardware_gpu, "nvidia_gpus", lambda *a, **k: ([card], None))


def kept_engine():
    folder = fetched_engines.engines_folder() / "llama-b11434-ubuntu-vulkan-x64"
    folder.mkdir()
    (folder / "llama-server").write_text("#!/bin/sh\n")
    return fetched_engines.register("vulkan", "Vulkan", "b11434", folder, folder / "llama-server",
                                    "Vulkan0: NVIDIA GeForce RTX 2060 (6144 MiB, 5136 MiB free)")


@pytest.mark.parametrize("action", ["plan", "get"])
def test_no_nvidia_card_is_one_sentence(capsys, monkeypatch, action):
    monkeypatch.setattr(hardware_gpu, "nvidia_gpus", lambda *a, **k: ([], None))
    assert main(["gpu-engine", action]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: No NVIDIA graphics card was found on this computer, so there is no GPU build to get.")
    assert "Traceback" not in err


def test_plan_says_which_build_and_why(capsys, monkeypatch):
    simulated_card(monkeypatch)
    code = main(["gpu-engine", "plan", "--json"])
    plan = json.loads(capsys.readouterr().out)
    builds = release_builds(platform_key())
    if not builds:  # a system the app fetches no build for: the refusal says so
        assert code == 1 and plan["refusal"]["kind"] == "no_build"
        return
    assert plan["build"] == "cuda-13" and plan["label"] == "CUDA 13.4"
    assert plan["reason"] == ("The CUDA 13.4 build fits the NVIDIA GeForce RTX 3080 Ti (compute capability 8.6) and "
                              "driver 580.82.07.")
    assert plan["urls"] == [official_source().url(asset) for asset in builds[0].assets]
    unpinned = [asset for asset in builds[0].assets if asset not in official_source().pins]
    if unpinned:  # no real digest is held yet (release_pins.py): refused before any download, and said so
        assert code == 1 and plan["refusal"]["kind"] == "not_pinned"
        assert plan["refusal"]["message"].startswith("The app holds no SHA-256 for ")
    else:
        assert code == 0 and plan["refusal"] is None


def test_list_and_remove(capsys):
    assert main(["gpu-engine", "list"]) == 0
    assert capsys.readouterr().out == "No GPU build of llama.cpp has been downloaded.\n"
    engine = kept_engine()
    assert main(["gpu-engine", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["engines"] == [engine.to_dict()]
    assert main(["gpu-engine", "remove", "--build", "vulkan"]) == 0
    assert capsys.readouterr().out == f"Removed the Vulkan build ({engine.folder}).\n"
    assert fetched_engines.registered_engines() == []
    assert not (fetched_engines.engines_folder() / engine.folder).exists()
    assert main(["gpu-engine", "remove"]) == 0
    assert capsys.readouterr().out == "No downloaded GPU build of llama.cpp to remove.\n"
