"""`gguf-launcher gpu-engine {plan,get,list,remove}`: its sentences and exit codes, against a loopback stand-in of
llama.cpp's release server and listing (tests/hub/fake_release.py) in place of GitHub (the fetch itself is tested in
tests/integration/hub/test_engine_fetch.py)."""

from __future__ import annotations

import hashlib
import json

import pytest

from app.cli import main
from app.core.hardware import gpu as hardware_gpu
from app.core.hardware.gpu import GpuInfo
from app.core.hub import engine_fetch
from app.core.launch import fetched_engines
from app.core.launch.release_builds import platform_key, release_builds
from app.core.text import T
from tests.hub.fake_release import FakeRelease


@pytest.fixture
def stand_in(monkeypatch):
    """The release server and GitHub's listing, served on this computer where the official source would be."""
    served = FakeRelease().start()
    monkeypatch.setattr(engine_fetch, "official_source", lambda: served.source())
    yield served
    served.stop()


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
    assert err.startswith(
        "error: No NVIDIA graphics card can be used on this computer, so there is no GPU build to get.")
    assert "Traceback" not in err


def test_no_nvidia_card_says_what_the_driver_said(capsys, monkeypatch):
    """NVML's reason is the next step once, not folded into the sentence in one language."""
    reason = T("No NVIDIA GPU usable: this user may not access the NVIDIA driver.",
               "无法使用 NVIDIA 显卡：当前用户无权访问 NVIDIA 驱动。")
    monkeypatch.setattr(hardware_gpu, "nvidia_gpus", lambda *a, **k: ([], reason))
    assert main(["gpu-engine", "plan"]) == 1
    err = capsys.readouterr().err
    assert err.count("may not access the NVIDIA driver") == 1
    assert "next step: No NVIDIA GPU usable: this user may not access the NVIDIA driver." in err


def test_plan_says_which_build_and_why_and_what_it_is_checked_against(capsys, monkeypatch, stand_in):
    simulated_card(monkeypatch)
    builds = release_builds(platform_key())
    stand_in.assets = {asset: asset.encode() for build in builds for asset in build.assets}
    code = main(["gpu-engine", "plan", "--json"])
    plan = json.loads(capsys.readouterr().out)
    if not builds:  # a system the app fetches no build for: the refusal says so
        assert code == 1 and plan["refusal"]["kind"] == "no_build"
        return
    assert code == 0 and plan["refusal"] is None
    assert plan["build"] == "cuda-13" and plan["label"] == "CUDA 13.4"
    assert plan["reason"] == ("The CUDA 13.4 build fits the NVIDIA GeForce RTX 3080 Ti (compute capability 8.6) and "
                              "driver 580.82.07.")
    assets = builds[0].assets
    assert plan["urls"] == [f"{stand_in.base_url}/{asset}" for asset in assets]
    assert plan["digest_source"] == "github"  # release_pins.py holds none for b11434: the listing's digests
    assert plan["archives"] == [{"name": asset, "url": f"{stand_in.base_url}/{asset}", "size": len(asset),
                                 "sha256": hashlib.sha256(asset.encode()).hexdigest(), "digest_source": "github"}
                                for asset in assets]
    assert plan["checked_against"] == ("Each archive is checked against the SHA-256 GitHub publishes for it in "
                                       "llama.cpp's release b11434 before it is unpacked.")
    assert stand_in.downloads_asked() == []


@pytest.mark.skipif(not release_builds(platform_key()), reason="the app fetches no GPU build for this system")
def test_get_without_the_listing_downloads_nothing(capsys, monkeypatch, stand_in):
    simulated_card(monkeypatch)
    stand_in.assets = {asset: b"x" for build in release_builds(platform_key()) for asset in build.assets}
    stand_in.api_status = 503
    assert main(["gpu-engine", "get"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: The app holds no SHA-256 for ")
    assert "could not read the one GitHub publishes for each in llama.cpp's release b11434" in err
    assert "Traceback" not in err
    assert stand_in.downloads_asked() == []


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
