"""ModelScope as a source, through the loopback fake ModelScope (tests/hub/fake_modelscope.py, real GGUF files): a
repository's files with size and SHA-256, the fit verdict read from their headers, a verified download (and one
resumed after a cut), the token sent as ModelScope's cookie, and one sentence for each failure."""

from __future__ import annotations

import socket

import pytest

from app.core.hardware.scan import scan_hardware
from app.core.hub import modelscope
from app.core.hub.client import list_files, search
from app.core.hub.download import download_model
from app.core.hub.errors import HubError, HubFault
from app.core.hub.fit import FitVerdict
from app.core.hub.remote import fit_listing
from app.core.hub.source import MODELSCOPE_URL, HubAccess, HubSource
from tests.hub import fixtures
from tests.hub.fake_hub import FakeRepo
from tests.hub.fake_modelscope import FakeModelScope
from tests.hub.fixtures import PRIVATE, TINY
from tests.model_cache import sha256_of

hub_files = fixtures.hub_files  # the shared fixture, by this name
MS_TOKEN = "ms-sdk-token"
GiB = 1 << 30


@pytest.fixture
def fake_ms(hub_files):
    with FakeModelScope() as ms:
        ms.add(FakeRepo(TINY, dict(hub_files)))
        ms.add(FakeRepo(PRIVATE, dict(hub_files), private=True, allowed_tokens=(MS_TOKEN,)))
        yield ms


def ms_access(ms: FakeModelScope, token: str | None = None) -> HubAccess:
    return HubAccess(HubSource.MODELSCOPE, endpoint=ms.url, token=token)


def test_the_listing_has_every_gguf_with_size_sha256_and_the_sdk_download_url(fake_ms, hub_files):
    listing = list_files(TINY, ms_access(fake_ms))
    assert listing.revision == "master"
    by_name = {m.name: m for m in listing.models}
    assert sorted(by_name) == ["split/tiny-llama-F16-split.gguf", "tiny-llama-F16.gguf", "tiny-llama-F32.gguf"]
    f16 = by_name["tiny-llama-F16.gguf"].parts[0]
    assert f16.size == hub_files["tiny-llama-F16.gguf"].stat().st_size
    assert f16.sha256 == sha256_of(hub_files["tiny-llama-F16.gguf"])
    split = by_name["split/tiny-llama-F16-split.gguf"]
    assert split.complete and len(split.parts) == 3
    assert split.parts[1].url == (f"{fake_ms.url}/api/v1/models/{TINY}/repo?Revision=master"
                                  "&FilePath=split%2Ftiny-llama-F16-split-00002-of-00003.gguf")
    listed = [r.path for r in fake_ms.requests]
    assert listed == [f"/api/v1/models/{TINY}/repo/files?Revision=master&Recursive=True"]


def test_fit_verdicts_from_the_headers(fake_ms):
    access = ms_access(fake_ms)
    listing = list_files(TINY, access)
    fits = {f.name: f for f in fit_listing(listing, access, scan_hardware(), "llama-server", vram_budget=8 * GiB)}
    assert {f.verdict for f in fits.values()} == {FitVerdict.FITS_GPU}
    assert sum(f.best for f in fits.values()) == 1 and fits["tiny-llama-F32.gguf"].best
    assert all(f.header_bytes > 0 and f.header_requests >= 1 for f in fits.values())
    assert all(r.range for r in fake_ms.requests if "FilePath=" in r.path)  # only ranged reads of the files


def test_download_is_verified_and_resumed_after_a_cut(fake_ms, hub_files, tmp_path):
    access = ms_access(fake_ms)
    model = next(m for m in list_files(TINY, access).models if m.name == "tiny-llama-F16.gguf")
    fake_ms.fault("/repo$", cut_after=100_000, times=1)
    path = download_model(model, access, folder=tmp_path / "models", retry_delays=(0.05, 0.05, 0.05))
    assert sha256_of(path) == sha256_of(hub_files["tiny-llama-F16.gguf"])
    gets = [r for r in fake_ms.requests if "FilePath=tiny-llama-F16.gguf" in r.path]
    assert [g.range for g in gets] == [None, "bytes=100000-"]
    assert sorted(p.name for p in path.parent.iterdir()) == ["tiny-llama-F16.gguf"]


def test_a_wrong_published_hash_is_refused_with_nothing_left(fake_ms, tmp_path):
    fake_ms.repos[TINY].hashes["tiny-llama-F16.gguf"] = "0" * 64
    access = ms_access(fake_ms)
    model = next(m for m in list_files(TINY, access).models if m.name == "tiny-llama-F16.gguf")
    with pytest.raises(HubError):
        download_model(model, access, folder=tmp_path / "models")
    assert not list((tmp_path / "models").rglob("*.gguf*"))


def test_a_private_repository_needs_the_modelscope_token_as_its_cookie(fake_ms, tmp_path):
    with pytest.raises(HubError) as caught:
        list_files(PRIVATE, ms_access(fake_ms))
    assert caught.value.kind is HubFault.GATED and caught.value.status == 403
    listing = list_files(PRIVATE, ms_access(fake_ms, MS_TOKEN))
    model = next(m for m in listing.models if m.name == "tiny-llama-F16.gguf")
    path = download_model(model, ms_access(fake_ms, MS_TOKEN), folder=tmp_path / "models")
    assert path.is_file()
    assert all(r.authorization is None for r in fake_ms.requests)  # a cookie, never an Authorization header


def test_failures_are_one_sentence(fake_ms):
    access = ms_access(fake_ms)
    with pytest.raises(HubError) as caught:
        list_files("test/missing", access)
    assert caught.value.kind is HubFault.NOT_FOUND
    assert str(caught.value.message) == "test/missing was not found on ModelScope (404)."
    fake_ms.fault("/repo/files$", status=429, retry_after=7, times=1)
    with pytest.raises(HubError) as caught:
        list_files(TINY, access)
    assert caught.value.kind is HubFault.RATE_LIMITED and caught.value.retry_after_s == 7
    assert str(caught.value.message) == ("ModelScope has had too many requests from this computer (429) and asks "
                                         "to wait 7 s.")
    assert "魔搭社区（ModelScope） 收到" in caught.value.message.render("zh")


def test_an_error_code_in_a_200_answer_is_its_message():
    """HubApi.get_model_files -> raise_on_error: HTTP 200 with a Code other than 200 is an error."""
    access = HubAccess(HubSource.MODELSCOPE, endpoint="http://unused")
    with pytest.raises(HubError) as caught:
        modelscope._data({"Code": 10010205001, "Message": "模型不存在", "Success": False}, access, TINY)
    assert caught.value.kind is HubFault.BAD_ANSWER and "模型不存在" in str(caught.value.message)
    with pytest.raises(HubError) as caught:
        modelscope._data({"Code": 404, "Message": "no", "Success": False}, access, TINY)
    assert caught.value.kind is HubFault.NOT_FOUND


def test_unreachable_is_one_sentence():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again below: nothing listens there
    access = HubAccess(HubSource.MODELSCOPE, endpoint=f"http://127.0.0.1:{port}", connect_timeout_s=2)
    with pytest.raises(HubError) as caught:
        list_files(TINY, access)
    assert caught.value.kind is HubFault.UNREACHABLE
    assert str(caught.value.next_step) == "Check the internet connection, or choose another source."


def test_search_lists_a_named_repository_and_refuses_words(fake_ms):
    access = ms_access(fake_ms)
    assert [h.repo for h in search(TINY, access)] == [TINY]
    before = len(fake_ms.requests)
    with pytest.raises(HubError) as caught:
        search("tiny llama", access)
    assert caught.value.kind is HubFault.NOT_SUPPORTED and len(fake_ms.requests) == before  # nothing was asked
    assert str(caught.value.message) == ("ModelScope cannot be searched by words here; the app can list one of its "
                                         "repositories by its name (owner/name).")
    assert "魔搭社区" in caught.value.message.render("zh")


def test_the_default_address_is_the_sdks(monkeypatch):
    monkeypatch.delenv("MODELSCOPE_DOMAIN", raising=False)
    assert HubAccess(HubSource.MODELSCOPE).url == MODELSCOPE_URL == "https://www.modelscope.cn"
    monkeypatch.setenv("MODELSCOPE_DOMAIN", "www.modelscope.ai")
    assert HubAccess(HubSource.MODELSCOPE).url == "https://www.modelscope.ai"
    assert "tok" not in repr(HubAccess(HubSource.MODELSCOPE, token="tok", proxy="http://u:tok@p:1"))
