"""A proxy of the user's own (HubAccess.proxy, the hub_proxy setting, `--proxy`): every listing and download request
to the fake Hub and the fake ModelScope passes through a loopback forward proxy that counts them; a proxy address
that cannot be used is one sentence that shows no password."""

from __future__ import annotations

import json
import socket

import pytest

from app.cli import main
from app.core.hub.client import list_files
from app.core.hub.download import download_model
from app.core.hub.errors import HubError, HubFault
from app.core.hub.http import redacted
from app.core.hub.source import HubAccess, HubSource
from app.core.settings import load_settings
from tests.hub import fixtures
from tests.hub.fake_hub import FakeRepo
from tests.hub.fake_modelscope import FakeModelScope
from tests.hub.fake_proxy import FakeProxy
from tests.hub.fixtures import TINY
from tests.model_cache import sha256_of

fake_hub, hub_files = fixtures.fake_hub, fixtures.hub_files  # the shared fixtures, by these names


@pytest.fixture
def proxy():
    with FakeProxy() as running:
        yield running


@pytest.fixture
def fake_ms(hub_files):
    with FakeModelScope() as ms:
        ms.add(FakeRepo(TINY, dict(hub_files)))
        yield ms


def _through(server, proxy) -> None:
    """Every request the server saw came through the proxy (and there were some). Compared as sorted lists: the
    fit verdicts read headers a few at a time, so the proxy and the server may log concurrent requests in other
    orders (a clean-clone run did)."""
    seen = [r.path for r in server.requests]
    assert seen and len(proxy.urls) == len(seen)
    assert sorted(u.split("/", 3)[-1] for u in proxy.urls) == sorted(p.lstrip("/") for p in seen)


@pytest.mark.parametrize("source", [HubSource.HUGGINGFACE, HubSource.MODELSCOPE])
def test_listing_and_download_go_through_the_proxy(source, fake_hub, fake_ms, hub_files, proxy, tmp_path):
    server = fake_hub if source is HubSource.HUGGINGFACE else fake_ms
    access = HubAccess(source, endpoint=server.url, proxy=proxy.url)
    model = next(m for m in list_files(TINY, access).models if m.name == "tiny-llama-F16.gguf")
    path = download_model(model, access, folder=tmp_path / "models")
    assert sha256_of(path) == sha256_of(hub_files["tiny-llama-F16.gguf"])
    _through(server, proxy)


def test_without_a_proxy_nothing_passes_through_it(fake_ms, proxy):
    list_files(TINY, HubAccess(HubSource.MODELSCOPE, endpoint=fake_ms.url))
    assert fake_ms.requests and proxy.urls == []


def test_the_cli_uses_proxy_and_else_the_saved_setting(capsys, fake_ms, proxy):
    assert main(["search", TINY, "--source", "modelscope", "--endpoint", fake_ms.url, "--no-fit", "--proxy",
                 proxy.url, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["repos"][0]["repo"] == TINY
    assert len(proxy.urls) == 1
    settings = load_settings()
    settings.set("hub_proxy", proxy.url)
    settings.save()
    assert main(["search", TINY, "--source", "modelscope", "--endpoint", fake_ms.url, "--no-fit", "--json"]) == 0
    assert len(proxy.urls) == 2 and len(fake_ms.requests) == 2


def test_an_unusable_proxy_is_one_sentence_without_its_password(fake_ms):
    access = HubAccess(HubSource.MODELSCOPE, endpoint=fake_ms.url, proxy="ftp://user:secret@proxy.example:21")
    with pytest.raises(HubError) as caught:
        list_files(TINY, access)
    message = str(caught.value.message)
    assert message == ("The proxy address ftp://proxy.example:21 cannot be used: it must look like "
                       "http://host:port.")
    assert "secret" not in message + caught.value.message.render("zh") + repr(access)
    assert redacted("http://proxy.example:8080") == "http://proxy.example:8080"
    assert fake_ms.requests == []


def test_header_reads_go_through_the_proxy_and_carry_the_modelscope_cookie(fake_ms, proxy):
    from app.core.hardware.scan import scan_hardware
    from app.core.hub.fit import FitVerdict
    from app.core.hub.remote import fit_listing

    fake_ms.repos[TINY].private, fake_ms.repos[TINY].allowed_tokens = True, ("ms-token",)
    access = HubAccess(HubSource.MODELSCOPE, endpoint=fake_ms.url, proxy=proxy.url, token="ms-token")
    fits = fit_listing(list_files(TINY, access), access, scan_hardware(), "llama-server", vram_budget=8 << 30)
    assert {f.verdict for f in fits} == {FitVerdict.FITS_GPU}
    _through(fake_ms, proxy)


@pytest.mark.parametrize("address", ["http://", "http://proxy.example:99999", "socks5://proxy.example:1080",
                                     "proxy.example:8080"])
def test_an_address_without_host_or_with_a_port_out_of_range_is_refused_before_any_request(address, fake_ms):
    access = HubAccess(HubSource.MODELSCOPE, endpoint=fake_ms.url, proxy=address)
    with pytest.raises(HubError) as caught:
        list_files(TINY, access)
    assert caught.value.kind is HubFault.PROXY and "cannot be used" in caught.value.message.render("en")
    assert fake_ms.requests == []


def test_a_proxy_nothing_answers_at_is_said_as_the_proxy_not_the_source(fake_ms):
    with socket.socket() as placeholder:  # a port that was free a moment ago: nothing listens there now
        placeholder.bind(("127.0.0.1", 0))
        port = placeholder.getsockname()[1]
    access = HubAccess(HubSource.MODELSCOPE, endpoint=fake_ms.url, proxy=f"http://alice:secret@127.0.0.1:{port}")
    with pytest.raises(HubError) as caught:
        list_files(TINY, access)
    message = caught.value.message.render("en")
    assert caught.value.kind is HubFault.PROXY
    assert message.startswith(f"The proxy http://127.0.0.1:{port} could not be used to reach"), message
    assert "secret" not in message + caught.value.next_step.render("en")
    assert fake_ms.requests == []
