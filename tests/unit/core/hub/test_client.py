"""Search and file lists through the real huggingface_hub against the loopback fake Hub, and every failure as one
sentence: gated/private (401/403), 404, 429 with Retry-After (answered at once, not retried), a slow and an
unreachable server, ModelScope not supported yet."""

from __future__ import annotations

import socket

import pytest

from app.core.hub.client import is_repo_id, list_files, search
from app.core.hub.errors import HubError, HubFault
from app.core.hub.source import HF_MIRROR_URL, HubAccess, HubSource
from tests.hub import fixtures
from tests.hub.fixtures import GATED, PRIVATE, TINY, TOKEN
from tests.model_cache import sha256_of

fake_hub, hub_files = fixtures.fake_hub, fixtures.hub_files  # the shared fixtures, by these names


def test_search_finds_gguf_repositories_most_downloaded_first(fake_hub):
    hits = search("llama", HubAccess(endpoint=fake_hub.url))
    assert [h.repo for h in hits] == [TINY, GATED]  # the private one is not listed
    assert hits[0].downloads == 50
    request = next(r for r in fake_hub.requests if r.path.startswith("/api/models?"))
    assert "search=llama" in request.path and "filter=gguf" in request.path
    assert request.authorization is None  # no token unless the user gave one


def test_listing_has_sizes_sha256_urls_shards_and_projector(fake_hub, hub_files):
    listing = list_files(TINY, HubAccess(endpoint=fake_hub.url))
    by_name = {m.name: m for m in listing.models}
    single = by_name["tiny-llama-F16.gguf"]
    assert single.quant == "F16" and not single.is_split
    assert single.parts[0].sha256 == sha256_of(hub_files["tiny-llama-F16.gguf"])
    assert single.size == hub_files["tiny-llama-F16.gguf"].stat().st_size
    assert listing.revision and listing.revision in single.parts[0].url
    split = by_name["split/tiny-llama-F16-split.gguf"]
    assert split.is_split and split.complete and len(split.parts) == 3
    assert [p.sha256 for p in split.parts] == [sha256_of(hub_files[p.path]) for p in split.parts]
    assert [p.path for p in listing.projectors] == ["mmproj-tiny-F16.gguf"]
    assert "README.md" not in by_name


def test_the_listed_url_serves_the_file(fake_hub, hub_files):
    import httpx2

    part = list_files(TINY, HubAccess(endpoint=fake_hub.url)).models[0].parts[0]
    response = httpx2.get(part.url, headers={"Range": "bytes=0-3"}, follow_redirects=True, timeout=10)
    assert response.status_code == 206 and response.content == b"GGUF"


def test_private_repository_is_the_token_sentence(fake_hub):
    with pytest.raises(HubError) as caught:
        list_files(PRIVATE, HubAccess(endpoint=fake_hub.url))
    assert caught.value.kind is HubFault.GATED and caught.value.status == 401
    assert str(caught.value.next_step) == "Accept the license on the model's page, then paste a token."
    assert list_files(PRIVATE, HubAccess(endpoint=fake_hub.url, token=TOKEN)).models


def test_missing_repository_is_not_found(fake_hub):
    with pytest.raises(HubError) as caught:
        list_files("test/no-such-repo", HubAccess(endpoint=fake_hub.url))
    assert caught.value.kind is HubFault.NOT_FOUND
    assert str(caught.value.message) == "test/no-such-repo was not found on the Hub (404)."


def test_rate_limit_is_said_at_once_with_its_wait(fake_hub):
    fake_hub.fault(r"^/api/models$", status=429, retry_after=120)
    with pytest.raises(HubError) as caught:
        search("llama", HubAccess(endpoint=fake_hub.url))
    assert caught.value.kind is HubFault.RATE_LIMITED and caught.value.retry_after_s == 120
    assert "asks to wait 120 s" in str(caught.value.message)
    assert len([r for r in fake_hub.requests if r.path.startswith("/api/models?")]) == 1  # not retried


def test_a_slow_server_is_no_answer_within_the_time_allowed(fake_hub):
    fake_hub.fault(r"^/api/models$", delay_s=30)
    with pytest.raises(HubError) as caught:
        search("llama", HubAccess(endpoint=fake_hub.url, read_timeout_s=0.5))
    assert caught.value.kind is HubFault.UNREACHABLE
    assert str(caught.value.message) == f"{fake_hub.url} did not answer within 0.5 s."


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_hugging_face_offers_the_mirror(monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    with pytest.raises(HubError) as caught:
        search("llama", HubAccess(HubSource.HUGGINGFACE, connect_timeout_s=2))
    error = caught.value
    assert error.kind is HubFault.UNREACHABLE and "could not be reached within 2 s" in str(error.message)
    assert str(error.next_step) == ("Check the internet connection, or choose the mirror hf-mirror.com as the "
                                    "source.")
    assert error.next_step is not None and "hf-mirror.com" in error.next_step.render("zh")


def test_modelscope_cannot_be_searched_by_words():
    with pytest.raises(HubError) as caught:
        search("qwen", HubAccess(HubSource.MODELSCOPE))
    assert caught.value.kind is HubFault.NOT_SUPPORTED
    assert str(caught.value.message).startswith("ModelScope cannot be searched by words here")


def test_sources_and_repo_ids(monkeypatch):
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    assert HubAccess().url == "https://huggingface.co"
    assert HubAccess(HubSource.HF_MIRROR).url == HF_MIRROR_URL
    monkeypatch.delenv("MODELSCOPE_DOMAIN", raising=False)
    assert HubAccess(HubSource.MODELSCOPE).url == "https://www.modelscope.cn"
    assert HubAccess().token_arg is False  # never the token other tools saved
    assert is_repo_id("bartowski/Qwen2.5-7B-Instruct-GGUF") and not is_repo_id("qwen 7b") and not is_repo_id("a/b/c")
