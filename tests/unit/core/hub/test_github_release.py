"""Reading GitHub's listing of a release (app/core/hub/github_release.py): the asset ``digest`` field
("sha256:<hex>", or null for an asset uploaded before GitHub computed digests; GitHub changelog 2025-06-03), the
names that look like one the release lacks, and a listing served by the loopback stand-in as the REST API's "Get a
release by tag name" answers."""

from __future__ import annotations

import hashlib

import pytest

from app.core.hub import github_release
from app.core.hub.github_release import ListingUnavailable, parse_release, read_release
from app.core.hub.source import HubAccess
from tests.hub.fake_release import FakeRelease

URL = "https://api.github.com/repos/ggml-org/llama.cpp/releases/tags/b11434"
ENGINE = "llama-b11434-bin-win-cuda-12.4-x64.zip"


def asset(name: str, digest: str | None, size: int = 10) -> dict:
    return {"name": name, "size": size, "digest": digest,
            "browser_download_url": f"https://github.com/ggml-org/llama.cpp/releases/download/b11434/{name}"}


def test_digests_are_read_as_github_writes_them():
    listing = parse_release({"tag_name": "b11434", "assets": [
        asset(ENGINE, "sha256:" + "ab" * 32, 123),
        asset("old.zip", None),  # uploaded before GitHub computed digests
        asset("other.zip", "sha512:" + "cd" * 64)]}, URL)
    assert listing.tag == "b11434" and listing.api_url == URL
    assert listing.assets[ENGINE].sha256 == "ab" * 32 and listing.assets[ENGINE].size == 123
    assert listing.assets[ENGINE].url == f"https://github.com/ggml-org/llama.cpp/releases/download/b11434/{ENGINE}"
    assert listing.assets["old.zip"].sha256 is None and listing.assets["old.zip"].digest is None
    assert listing.assets["other.zip"].sha256 is None and listing.assets["other.zip"].digest.startswith("sha512:")


@pytest.mark.parametrize("answer", [[], {"message": "Not Found"}, {"assets": [{"size": 1}]},
                                    {"assets": [{"name": "a.zip", "size": "12"}]}])
def test_an_answer_that_is_not_a_release_is_refused(answer):
    with pytest.raises(ValueError):
        parse_release(answer, URL)


def test_names_that_look_alike():
    names = [ENGINE.replace("12.4", "12.8"), "cudart-llama-bin-win-cuda-12.8-x64.zip",
             "llama-b11434-bin-win-cpu-x64.zip", "llama-b11434-bin-win-vulkan-x64.zip"]
    listing = parse_release({"tag_name": "b11434", "assets": [asset(name, None) for name in names]}, URL)
    assert listing.look_alike(ENGINE) == [ENGINE.replace("12.4", "12.8")]  # only a number moved
    assert listing.look_alike("llama-b11434-bin-win-vulkan-x64.zi") == ["llama-b11434-bin-win-vulkan-x64.zip"]
    assert listing.look_alike("koboldcpp.exe") == []


@pytest.fixture
def release():
    served = FakeRelease().start()
    yield served
    served.stop()


def test_the_listing_is_read_with_githubs_headers(release):
    release.assets = {ENGINE: b"zip bytes"}
    listing = read_release(release.source().api_url or "", HubAccess(endpoint=release.api_base))
    assert listing.assets[ENGINE].sha256 == hashlib.sha256(b"zip bytes").hexdigest()
    headers = release.listing_headers[0]
    assert headers["accept"] == "application/vnd.github+json" and headers["x-github-api-version"] == "2022-11-28"
    assert headers["user-agent"].startswith("gguf-launcher/") and "authorization" not in headers


def test_an_answer_larger_than_a_listing_is_not_read(release, monkeypatch):
    release.assets = {f"asset-{n}.zip": b"x" for n in range(50)}
    monkeypatch.setattr(github_release, "MAX_ANSWER_BYTES", 1000)
    with pytest.raises(ListingUnavailable) as caught:
        read_release(release.source().api_url or "", HubAccess(endpoint=release.api_base))
    assert caught.value.why.render("en") == (f"the answer of {release.api_base.removeprefix('http://')} is larger "
                                             "than a release listing can be")
