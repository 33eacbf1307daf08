"""Sharing the supervised server on the network, proved on loopback with a real llama-server behind the proxy:
no key -> 401, the key -> an answer, over the limit -> 429 with Retry-After, streaming passes through as it comes,
and the proxy goes with the supervisor (no thread, no port left)."""

from __future__ import annotations

import socket
import threading
import time

import httpx
import pytest

from app.core.chat import errors
from app.core.chat.client import ChatClient
from app.core.chat.params import ChatParams
from app.core.server.lan_share import LanShare, ShareSettings

pytestmark = pytest.mark.slow
CHAT = {"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 8}
LONG = {"messages": [{"role": "user", "content": "Tell a story"}], "max_tokens": 1500, "stream": True,
        "ignore_eos": True}  # about 1 s or more on the tiny model: long enough to be over the limit meanwhile


@pytest.fixture
def shared(running_server):
    supervisor = running_server("llama-server", parallel=1, ctx=2048)
    share = LanShare(supervisor, ShareSettings(port=0))
    share.start()
    return supervisor, share, share.urls[0]


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_no_key_is_refused_and_the_key_gets_an_answer(shared):
    supervisor, share, url = shared
    assert supervisor.config.host == "127.0.0.1"  # the server itself stays on loopback
    assert httpx.get(url + "/health").status_code == 200  # like llama-server: health needs no key
    assert httpx.post(url + "/v1/chat/completions", json=CHAT).status_code == 401
    assert httpx.post(url + "/v1/chat/completions", json=CHAT, headers=bearer("wrong")).status_code == 401
    reply = httpx.post(url + "/v1/chat/completions", json=CHAT, headers=bearer(share.settings.api_key), timeout=60)
    assert reply.status_code == 200 and reply.json()["choices"][0]["message"]["content"] is not None


def test_the_chat_client_says_a_key_is_wanted(shared):
    _, _, url = shared
    client = ChatClient(url, backend="llama-server")
    try:
        with pytest.raises(errors.ChatError) as caught:
            client.server_info()
    finally:
        client.close()
    assert caught.value.message.render("en") == f"The server at {url} wants an API key."


def test_over_the_limit_is_429_with_retry_after_and_streaming_passes_through(shared):
    _, share, url = shared
    arrivals: list[float] = []
    first = threading.Event()

    def long_answer() -> None:
        started = time.monotonic()
        with httpx.stream("POST", url + "/v1/chat/completions", json=LONG, headers=bearer(share.settings.api_key),
                          timeout=120) as reply:
            for line in reply.iter_lines():
                if line.startswith("data: ") and "content" in line:
                    arrivals.append(time.monotonic() - started)
                    first.set()

    asker = httpx.Client(headers=bearer(share.settings.api_key))  # made first: a new client takes ~0.1 s
    client = ChatClient(url, api_key=share.settings.api_key, backend="llama-server", ctx_per_slot=512)
    thread = threading.Thread(target=long_answer)
    thread.start()
    try:
        assert first.wait(60), "no streamed piece arrived"
        busy = asker.post(url + "/v1/chat/completions", json=CHAT)
        assert busy.status_code == 429
        assert int(busy.headers["Retry-After"]) >= 1 and "Retry in" in busy.json()["error"]["message"]
        with pytest.raises(errors.ChatError) as caught:
            list(client.stream(CHAT["messages"], ChatParams(max_tokens=8)))
        assert caught.value.kind == errors.BUSY and "try again in" in caught.value.message.render("en")
    finally:
        thread.join(120)
        client.close()
        asker.close()
    assert len(arrivals) > 20 and arrivals[-1] - arrivals[0] > 0.05  # pieces came one by one, not in one lump
    deadline = time.monotonic() + 10  # the slot is given back just after the last byte is written: under load, later
    while share.proxy.limit.active and time.monotonic() < deadline:
        time.sleep(0.05)
    assert share.proxy.limit.active == 0


def test_the_proxy_stops_with_the_supervisor(shared):
    supervisor, share, url = shared
    port = share.proxy.bound_port
    supervisor.close()
    assert not share.running
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    names = [t.name for t in threading.enumerate()]
    assert not [n for n in names if "share-proxy" in n or "process_request" in n], names


def test_closing_mid_answer_cuts_the_stream_and_leaves_no_thread(shared):
    supervisor, share, url = shared
    first = threading.Event()
    ended: list[str] = []

    def long_answer() -> None:
        try:
            with httpx.stream("POST", url + "/v1/chat/completions", json=LONG,
                              headers=bearer(share.settings.api_key), timeout=60) as reply:
                for line in reply.iter_lines():
                    if "content" in line:
                        first.set()
            ended.append("complete")
        except httpx.HTTPError as exc:
            ended.append(type(exc).__name__)

    thread = threading.Thread(target=long_answer)
    thread.start()
    assert first.wait(60)
    started = time.monotonic()
    supervisor.close()
    thread.join(30)
    assert not thread.is_alive() and ended and time.monotonic() - started < 10
    names = [t.name for t in threading.enumerate()]
    assert not [n for n in names if "share-proxy" in n or "process_request" in n], names


def test_a_browser_preflight_needs_no_key_and_head_has_no_body(shared):
    _, share, url = shared
    preflight = httpx.options(url + "/v1/chat/completions", headers={"Origin": "http://192.0.2.9",
                                                                       "Access-Control-Request-Method": "POST"})
    assert preflight.status_code != 401
    head = httpx.head(url + "/v1/models", headers=bearer(share.settings.api_key))
    assert head.status_code < 500 and head.content == b""
