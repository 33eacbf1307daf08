"""Getting a GPU engine against a loopback stand-in of llama.cpp's release server (tests/hub/fake_release.py).

What this proves: the whole path the app takes (pinned digests, or the ones the release's listing publishes as
GitHub's API does, and every refusal about them before a byte of an archive is fetched; the model downloader with
Range and cancel, safe unpacking of the release's Ubuntu layout with its library links, the engine-folder check, the
reading of a recorded ``--list-devices`` output, a real generation by llama.cpp b11434, registration and removal)
and that every refusal leaves no folder, no download and no entry behind. What it cannot prove: that a real CUDA or
Vulkan build sees a real card, that the real archives' digests are the ones pinned, or that api.github.com answers
as its documentation and the stand-in say (no card and no network here): the stand-in's llama-server prints a
recorded device list and the card's buffer line, then generates on the processor.
"""

from __future__ import annotations

import hashlib
import os
import socket
import sys
import time
from pathlib import Path

import pytest

from app.core.hub.download_progress import DownloadStopped, StopReason
from app.core.hub.engine_fetch import DigestSource, EngineFetchError, FetchFault, Phase, get_gpu_engine, plan_fetch
from app.core.launch import fetched_engines
from app.core.launch.cuda_facts import CardFacts
from app.core.launch.release_builds import LINUX_X64, WINDOWS_X64, BuildKind, ReleaseSource
from app.core.launch.release_pins import Pin
from tests.hub.fake_release import FakeRelease, linux_cuda_archives, stand_in_server_script, tar_gz, zip_bytes

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the stand-in llama-server is a POSIX shell script")

DATA = Path(__file__).resolve().parents[2] / "data" / "list_devices"
CARD = CardFacts("NVIDIA GeForce RTX 3080 Ti", "8.6", "580.82.07", "13.0")
CUDA_LISTING = (DATA / "ollama_16508_cuda.txt").read_text(encoding="utf-8")
NO_DEVICE = (DATA / "b11434_cpu_none.txt").read_text(encoding="utf-8")
ENGINE = "llama-b11434-bin-ubuntu-cuda-13.4-x64.tar.gz"
RUNTIME = "cudart-llama-b11434-bin-ubuntu-cuda-13.4-x64.tar.gz"


@pytest.fixture
def release():
    served = FakeRelease().start()
    yield served
    served.stop()


def pins_of(assets: dict[str, bytes]) -> dict[str, Pin]:
    return {name: Pin(hashlib.sha256(data).hexdigest(), len(data)) for name, data in assets.items()}


def pinned(release: FakeRelease, **overrides: Pin) -> ReleaseSource:
    return ReleaseSource(release.base_url, release.tag, pins_of(release.assets) | overrides)


def closed_port_url() -> str:
    """An address on this computer where nothing listens (the port was free a moment ago): connections are refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def left_behind() -> list[str]:
    """Everything under the engines folder but the (possibly empty) downloads folder and the registry."""
    root = fetched_engines.engines_folder()
    return sorted(str(path.relative_to(root)) for path in root.rglob("*")
                  if not (path.is_dir() and path.name in ("downloads", "llama.cpp", "b11434"))
                  and path.name != fetched_engines.REGISTRY_NAME)


def fails(release: FakeRelease, kind: FetchFault, **kwargs) -> EngineFetchError:
    with pytest.raises(EngineFetchError) as caught:
        get_gpu_engine(CARD, source=kwargs.pop("source", None) or pinned(release), key=LINUX_X64, **kwargs)
    assert caught.value.kind is kind, caught.value.message.render("en")
    assert left_behind() == []
    assert fetched_engines.registered_engines() == []
    return caught.value


READY = "The CUDA 13.4 build of llama.cpp is ready and can use the NVIDIA GeForce RTX 3080 Ti; every archive matched "


@pytest.mark.slow
@pytest.mark.parametrize("whose", [DigestSource.GITHUB, DigestSource.APP])
def test_a_checked_build_is_registered_and_removable(release, llama_server_bin, tiny_model, whose):
    """GITHUB: the app holds no digest (as for b11434 today) and checks the bytes against the release listing's;
    APP: it holds them (the same as the listing's) and they decide."""
    release.assets = linux_cuda_archives(stand_in_server_script(llama_server_bin, CUDA_LISTING))
    source = release.source(pins_of(release.assets) if whose is DigestSource.APP else None)
    phases: list[Phase] = []
    said: list[str] = []

    def progress(step) -> None:
        phases.append(step.phase)
        said.append(step.sentence.render("en"))

    engine = get_gpu_engine(CARD, source=source, key=LINUX_X64, model=tiny_model, on_progress=progress)

    folder = Path(engine.folder)
    assert folder.name == "llama-b11434-ubuntu-cuda-13.4-x64" and folder.parent == fetched_engines.engines_folder()
    assert engine.device == "CUDA0: NVIDIA GeForce RTX 3080 Ti (11909 MiB, 11650 MiB free)"
    assert (folder / "libggml-base.so").resolve() == (folder / "libggml-base.so.0.9.4").resolve()
    assert (folder / "libcudart.so.13").is_file()  # the runtime archive lands beside the CUDA backend
    assert fetched_engines.registered_engines() == [engine]
    assert fetched_engines.fetched_launchers() == [folder / "llama-server"]
    assert left_behind() == sorted([folder.name, *(str(p.relative_to(folder.parent)) for p in folder.rglob("*"))])
    assert [p for p in dict.fromkeys(phases)] == [Phase.DOWNLOAD, Phase.UNPACK, Phase.LIST_DEVICES, Phase.GENERATE,
                                                  Phase.DONE]
    assert said[-1] == READY + ("the SHA-256 GitHub publishes for it in llama.cpp's release b11434."
                                if whose is DigestSource.GITHUB else "the SHA-256 the app holds for it.")
    assert [path for path, _ in release.requests].count(release.api_path) == 1

    removed = fetched_engines.remove_engine(BuildKind.CUDA13.value)
    assert removed == [engine] and not folder.exists() and fetched_engines.registered_engines() == []


@pytest.mark.slow
def test_a_build_that_generates_on_the_processor_is_refused(release, llama_server_bin, tiny_model):
    release.assets = linux_cuda_archives(stand_in_server_script(llama_server_bin, CUDA_LISTING, buffer_line=None))
    error = fails(release, FetchFault.GENERATION, model=tiny_model)
    assert error.message.render("en") == ("The downloaded CUDA 13.4 build generated text, but on the processor: the "
                                          "NVIDIA GeForce RTX 3080 Ti (CUDA0) did not hold the test model.")


def test_a_build_that_cannot_generate_is_refused(release, llama_server_bin, tmp_path):
    release.assets = linux_cuda_archives(stand_in_server_script(llama_server_bin, CUDA_LISTING, serve_fails=True))
    error = fails(release, FetchFault.GENERATION, model=tmp_path / "never-read.gguf")  # it fails before loading
    assert error.message.render("en").startswith("The downloaded CUDA 13.4 build could not generate with a small "
                                                 "test model on the NVIDIA GeForce RTX 3080 Ti (the server stopped")
    assert any("CUDA driver version is insufficient" in line for line in error.evidence)
    assert error.next_step is not None and "Vulkan" in error.next_step.render("en")


def test_a_build_that_does_not_list_the_card_is_refused(release, llama_server_bin):
    release.assets = linux_cuda_archives(stand_in_server_script(llama_server_bin, NO_DEVICE))
    error = fails(release, FetchFault.CARD_NOT_LISTED)
    assert error.message.render("en") == ("The downloaded CUDA 13.4 build does not see the NVIDIA GeForce RTX 3080 "
                                          "Ti: it lists no graphics card.")
    assert error.message.render("zh") == "下载的 CUDA 13.4 版本看不到 NVIDIA GeForce RTX 3080 Ti：它没有列出任何显卡。"


def test_a_wrong_digest_keeps_nothing(release, llama_server_bin):
    release.assets = linux_cuda_archives(stand_in_server_script(llama_server_bin, CUDA_LISTING))
    size = len(release.assets[ENGINE])
    error = fails(release, FetchFault.DIGEST, source=pinned(release, **{ENGINE: Pin("0" * 64, size)}))
    assert error.message.render("en") == (f"{ENGINE} does not match the SHA-256 the app holds for it, so it was not "
                                          "kept; the downloaded part was removed.")


def test_a_truncated_archive_keeps_nothing(release, llama_server_bin):
    """The release itself broken: the pinned bytes are half an archive (the digest matches, unpacking fails)."""
    archives = linux_cuda_archives(stand_in_server_script(llama_server_bin, CUDA_LISTING))
    archives[ENGINE] = archives[ENGINE][: len(archives[ENGINE]) // 2]
    release.assets = archives
    error = fails(release, FetchFault.ARCHIVE)
    assert error.message.render("en").startswith(f"{ENGINE} cannot be unpacked: the archive is damaged or incomplete")


def test_a_zip_slip_entry_is_refused(release, tmp_path):
    name = "llama-b11434-bin-win-vulkan-x64.zip"
    release.assets = {name: zip_bytes({"llama-server.exe": b"MZ", "../../evil.dll": b"MZ"})}
    with pytest.raises(EngineFetchError) as caught:
        get_gpu_engine(CARD, source=pinned(release), key=WINDOWS_X64, build=BuildKind.VULKAN)
    assert caught.value.kind is FetchFault.ARCHIVE
    assert caught.value.message.render("en") == (f"{name} was not unpacked: its entry ../../evil.dll is a path that "
                                                 "leads out of the folder, and the app unpacks no such entry.")
    assert left_behind() == [] and not list(tmp_path.rglob("evil.dll"))


def test_a_link_out_of_the_folder_is_refused(release):
    release.assets = {ENGINE: tar_gz({"llama-b11434/llama-server": (b"#!/bin/sh\n", 0o755)},
                                     links={"llama-b11434/libggml-base.so": "/etc/passwd"}),
                      RUNTIME: tar_gz({"x/libcudart.so.13": b"x"})}
    error = fails(release, FetchFault.ARCHIVE)
    assert "libggml-base.so is a link to /etc/passwd, not to a file beside it" in error.message.render("en")


def test_a_missing_runtime_archive_is_said(release, llama_server_bin):
    archives = linux_cuda_archives(stand_in_server_script(llama_server_bin, CUDA_LISTING))
    source_pins = pins_of(archives)
    release.assets = {ENGINE: archives[ENGINE]}  # the server lost the runtime archive
    error = fails(release, FetchFault.DOWNLOAD, source=ReleaseSource(release.base_url, release.tag, source_pins))
    assert error.message.render("en") == f"llama.cpp's release server has no {RUNTIME} for release b11434 (404)."


def test_a_runtime_archive_without_its_libraries_is_refused(release, llama_server_bin):
    archives = linux_cuda_archives(stand_in_server_script(llama_server_bin, CUDA_LISTING))
    archives[RUNTIME] = tar_gz({"cudart/libcudart.so.13": b"x", "cudart/libcublasLt.so.13": b"x"})
    release.assets = archives
    error = fails(release, FetchFault.INCOMPLETE)
    assert error.message.render("en") == ("This CUDA build of llama.cpp cannot use the graphics card: the CUDA "
                                          "runtime files it needs are missing (libcublas.so.13).")


def test_an_unpinned_archive_is_refused_before_any_download(release, llama_server_bin):
    release.assets = linux_cuda_archives(stand_in_server_script(llama_server_bin, CUDA_LISTING))
    error = fails(release, FetchFault.NOT_PINNED, source=ReleaseSource(release.base_url, release.tag, {}))
    assert error.message.render("en") == (f"The app holds no SHA-256 for {ENGINE}, {RUNTIME}, so it does not "
                                          "download the CUDA 13.4 build: an archive it cannot check is never "
                                          "unpacked.")
    assert release.requests == []


def test_cancel_keeps_nothing_and_leaves_a_listed_engine_alone(release, llama_server_bin, tmp_path):
    kept = fetched_engines.engines_folder() / "llama-b11434-ubuntu-vulkan-x64"
    kept.mkdir()
    (kept / "llama-server").write_text("#!/bin/sh\n")
    earlier = fetched_engines.register("vulkan", "Vulkan", "b11434", kept, kept / "llama-server", "Vulkan0: x")
    archives = linux_cuda_archives(stand_in_server_script(llama_server_bin, CUDA_LISTING))
    archives[ENGINE] = tar_gz({"llama-b11434/padding": os.urandom(4 << 20)})  # several chunks to stop between
    release.assets = archives
    calls = {"n": 0}

    def stop() -> StopReason | None:
        calls["n"] += 1
        return StopReason.CANCEL if calls["n"] > 3 else None

    with pytest.raises(DownloadStopped):
        get_gpu_engine(CARD, source=pinned(release), key=LINUX_X64, should_stop=stop)
    assert fetched_engines.registered_engines() == [earlier]
    assert [p for p in left_behind() if not p.startswith(kept.name)] == []


def test_pause_keeps_the_partial_and_the_next_try_continues_it(release, llama_server_bin):
    archives = linux_cuda_archives(stand_in_server_script(llama_server_bin, NO_DEVICE))
    archives[ENGINE] = tar_gz({"llama-b11434/llama-server": (stand_in_server_script(llama_server_bin, NO_DEVICE)
                                                             .encode(), 0o755),
                               "llama-b11434/padding": os.urandom(4 << 20)})
    release.assets = archives
    calls = {"n": 0}

    def pause() -> StopReason | None:
        calls["n"] += 1
        return StopReason.PAUSE if calls["n"] > 3 else None

    with pytest.raises(DownloadStopped):
        get_gpu_engine(CARD, source=pinned(release), key=LINUX_X64, should_stop=pause)
    partial = fetched_engines.engines_folder() / "downloads" / "llama.cpp" / "b11434" / (ENGINE + ".part")
    assert partial.is_file() and partial.stat().st_size > 0
    fails(release, FetchFault.CARD_NOT_LISTED)  # the next try downloads the rest, then the check refuses it
    assert any(rng and rng.startswith("bytes=") and rng != "bytes=0-" for _, rng in release.requests)


def test_an_old_card_or_driver_gets_the_cuda_12_or_vulkan_build(release):
    release.assets = {}
    pascal = plan_fetch(CardFacts("NVIDIA GeForce GTX 1070", "6.1", "560.94", "12.6"), source=pinned(release),
                        key=LINUX_X64)
    assert pascal.build is not None and pascal.build.kind is BuildKind.CUDA12
    assert pascal.urls == (f"{release.base_url}/llama-b11434-bin-ubuntu-cuda-12.8-x64.tar.gz",
                           f"{release.base_url}/cudart-llama-b11434-bin-ubuntu-cuda-12.8-x64.tar.gz")
    old_driver = plan_fetch(CardFacts("NVIDIA GeForce RTX 3070", "8.6", "470.256.02", "11.4"), source=pinned(release),
                            key=WINDOWS_X64)
    assert old_driver.build is not None and old_driver.build.kind is BuildKind.VULKAN
    assert old_driver.reason.render("en") == (
        "The Vulkan build fits the NVIDIA GeForce RTX 3070: the CUDA 13.4 build needs NVIDIA driver 580 or newer, "
        "and this one is 470.256.02 (it supports CUDA up to 11.4).")


def test_an_archive_without_llama_server_is_refused(release):
    release.assets = {ENGINE: tar_gz({"llama-b11434/llama-cli": (b"#!/bin/sh\n", 0o755)}),
                      RUNTIME: tar_gz({"x/libcudart.so.13": b"x"})}
    error = fails(release, FetchFault.INCOMPLETE)
    assert error.message.render("en") == ("After unpacking the CUDA 13.4 build, its llama-server program is not there: "
                                          "the archive holds none, or an antivirus program removed it at once.")


# --- the digests GitHub publishes in the release's listing ------------------------------------------------------


def test_the_plan_says_which_digests_the_archives_are_checked_against(release):
    release.assets = {ENGINE: b"engine bytes", RUNTIME: b"runtime bytes"}
    plan = plan_fetch(CARD, source=release.source(), key=LINUX_X64)
    assert plan.refusal is None and plan.total_bytes == len(b"engine bytes") + len(b"runtime bytes")
    assert [(a.name, a.sha256, a.source) for a in plan.archives] == [
        (ENGINE, hashlib.sha256(b"engine bytes").hexdigest(), DigestSource.GITHUB),
        (RUNTIME, hashlib.sha256(b"runtime bytes").hexdigest(), DigestSource.GITHUB)]
    assert plan.checked_against is not None and plan.checked_against.render("en") == (
        "Each archive is checked against the SHA-256 GitHub publishes for it in llama.cpp's release b11434 before "
        "it is unpacked.")
    assert release.downloads_asked() == []


def test_pins_decide_when_the_listing_cannot_be_read(release):
    release.assets = {ENGINE: b"engine bytes", RUNTIME: b"runtime bytes"}
    source = ReleaseSource(release.base_url, release.tag, pins_of(release.assets), closed_port_url())
    plan = plan_fetch(CARD, source=source, key=LINUX_X64)
    assert plan.refusal is None and {a.source for a in plan.archives} == {DigestSource.APP}
    assert plan.checked_against is not None and plan.checked_against.render("en") == (
        "Each archive is checked against the SHA-256 the app holds for it before it is unpacked.")
    assert any(line.startswith("release listing not read: 127.0.0.1:") for line in plan.evidence)


@pytest.mark.parametrize("answer", ["refused", "503", "rate-limited"])
def test_no_listing_means_no_download(release, answer):
    release.assets = {ENGINE: b"engine bytes", RUNTIME: b"runtime bytes"}
    source = release.source()
    if answer == "refused":
        source = ReleaseSource(release.base_url, release.tag, {}, closed_port_url())
    elif answer == "503":
        release.api_status = 503
    else:
        release.api_status = 403
        release.api_headers = {"x-ratelimit-limit": "60", "x-ratelimit-remaining": "0",
                               "x-ratelimit-reset": str(int(time.time()) + 600)}
    error = fails(release, FetchFault.NOT_PINNED, source=source)
    host = source.api_base.removeprefix("http://") if source.api_base else ""
    why = {"refused": f"{host} could not be reached: ",
           "503": f"{host} answered with an error (503)",
           "rate-limited": "GitHub has answered as many requests from this address as it allows in an hour (60) and "
                           "asks to wait (403)"}[answer]
    assert error.message.render("en").startswith(
        f"The app holds no SHA-256 for {ENGINE}, {RUNTIME} and could not read the one GitHub publishes for each in "
        f"llama.cpp's release b11434 ({why}")
    assert error.message.render("en").endswith("), so it does not download the CUDA 13.4 build: an archive it cannot "
                                               "check is never unpacked.")
    assert error.next_step is not None
    step = error.next_step.render("en")
    assert step.startswith("Try again in 10 min. Or download" if answer == "rate-limited" else
                           "Check the internet connection, then try again. Or download" if answer == "refused" else
                           "Try again later. Or download")
    assert release.downloads_asked() == []
    assert "Traceback" not in error.message.render("en") + step


def test_an_archive_without_a_published_digest_is_refused(release):
    release.assets = {ENGINE: b"engine bytes", RUNTIME: b"runtime bytes"}
    release.published[RUNTIME] = None  # an asset uploaded before GitHub computed digests
    error = fails(release, FetchFault.NOT_PINNED, source=release.source())
    assert error.message.render("en") == (
        f"GitHub publishes no SHA-256 for {RUNTIME} in llama.cpp's release b11434, and the app holds none, so it does "
        "not download the CUDA 13.4 build: an archive it cannot check is never unpacked.")
    assert error.message.render("zh").startswith(f"GitHub 没有在 llama.cpp b11434 版发布中公布 {RUNTIME} 的 SHA-256")
    assert release.downloads_asked() == []


def test_bytes_that_differ_from_the_published_digest_keep_nothing(release):
    release.assets = {ENGINE: b"engine bytes", RUNTIME: b"runtime bytes"}
    release.published[ENGINE] = "sha256:" + "0" * 64
    error = fails(release, FetchFault.DIGEST, source=release.source())
    assert error.message.render("en") == (
        f"{ENGINE} does not match the SHA-256 GitHub publishes for it in llama.cpp's release b11434, so it was not "
        "kept; the downloaded part was removed.")
    assert release.downloads_asked() == [f"/download/b11434/{ENGINE}"]


def test_bytes_of_another_size_than_the_published_one_keep_nothing(release):
    release.assets = {ENGINE: b"engine bytes", RUNTIME: b"runtime bytes"}
    release.listed_size[RUNTIME] = len(b"runtime bytes") + 5
    error = fails(release, FetchFault.DIGEST, source=release.source())
    assert error.message.render("en") == (
        f"{RUNTIME} did not arrive as the file GitHub lists in llama.cpp's release b11434 (its size and SHA-256), so "
        "it was not kept.")


@pytest.mark.parametrize("differs", ["SHA-256", "size"])
def test_a_pin_and_a_different_published_digest_refuse(release, differs):
    """The pin decides what the bytes must be; when GitHub publishes something else for the same asset, one of the
    two is wrong and the app cannot tell which, so nothing is downloaded."""
    release.assets = {ENGINE: b"engine bytes", RUNTIME: b"runtime bytes"}
    pins = pins_of(release.assets)
    if differs == "SHA-256":
        release.published[ENGINE] = "sha256:" + "1" * 64
    else:
        pins[ENGINE] = Pin(pins[ENGINE].sha256, pins[ENGINE].size + 1)
    error = fails(release, FetchFault.DIGESTS_DIFFER, source=release.source(pins))
    assert error.message.render("en") == (
        f"The {differs} GitHub publishes for {ENGINE} in llama.cpp's release b11434 differs from the one the app "
        "holds, so it does not download the CUDA 13.4 build: when the two disagree, neither is trusted.")
    assert release.downloads_asked() == []


def test_a_renamed_archive_is_said_before_any_download(release):
    moved = {ENGINE.replace("13.4", "13.5"): b"engine", RUNTIME.replace("13.4", "13.5"): b"runtime",
             "llama-b11434-bin-ubuntu-vulkan-x64.tar.gz": b"vulkan", "llama-b11434-bin-win-cpu-x64.zip": b"cpu"}
    release.assets = dict(moved)
    error = fails(release, FetchFault.NOT_IN_RELEASE, source=release.source())
    assert error.message.render("en") == (
        f"llama.cpp's release b11434 on GitHub has no {ENGINE}, {RUNTIME}, so the CUDA 13.4 build cannot be "
        f"downloaded; names it has that look alike: {ENGINE.replace('13.4', '13.5')}, "
        f"{RUNTIME.replace('13.4', '13.5')}.")
    assert release.downloads_asked() == []

    release.assets = {"llama-b11434-bin-win-cpu-x64.zip": b"cpu"}
    error = fails(release, FetchFault.NOT_IN_RELEASE, source=release.source())
    assert error.message.render("en").endswith("and no file of the release has a name like it.")
