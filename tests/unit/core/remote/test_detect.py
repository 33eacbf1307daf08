"""Detection of Ollama and LM Studio from their documented answers, replayed by a stand-in on loopback (neither
server can run here); llama-server is detected against the real one in tests/integration/chat/test_remote.py."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from app.core.chat import errors
from app.core.problem import UserError
from app.core.remote import LM_STUDIO, OLLAMA, UNKNOWN_CTX_GUARD, client_for_remote, connect, normalize_url

# LM Studio 0.3.x: GET /api/v0/models (docs "REST API v0"); unknown routes answer 200 with an error text
LM_STUDIO_ROUTES = {
    ("GET", "/v1/models"): {"data": [{"id": "gemma-3-4b-it", "object": "model"}], "object": "list"},
    ("GET", "/api/v0/models"): {"object": "list", "data": [
        {"id": "qwen2-vl-7b-instruct", "type": "vlm", "state": "not-loaded", "max_context_length": 32768},
        {"id": "gemma-3-4b-it", "type": "vlm", "state": "loaded", "max_context_length": 131072,
         "loaded_context_length": 4096}]},
}
# Ollama: /api/ps reports what the loaded runner holds; /api/show the Modelfile's parameters and the GGUF maximum
OLLAMA_ROUTES = {
    ("GET", "/v1/models"): {"object": "list", "data": [{"id": "qwen3:0.6b", "object": "model"}]},
    ("GET", "/api/version"): {"version": "0.34.2"},
    ("GET", "/api/ps"): {"models": [{"name": "qwen3:0.6b", "model": "qwen3:0.6b", "context_length": 4096}]},
    ("POST", "/api/show"): {"parameters": "temperature 0.6\nnum_ctx 8192", "model_info": {
        "general.architecture": "qwen3", "qwen3.context_length": 40960}},
}


def serve(routes: dict, *, key: str | None = None, unknown_200: bool = False, loading: bool = False):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self):
            if self.command == "POST":
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if loading:
                status, body = 503, {"error": {"message": "Loading model", "type": "unavailable_error", "code": 503}}
            elif key and self.headers.get("Authorization") != f"Bearer {key}":
                status, body = 401, {"error": {"message": "Invalid API Key"}}
            elif (self.command, self.path) in routes:
                status, body = 200, routes[(self.command, self.path)]
            elif unknown_200:
                status, body = 200, {"error": f"Unexpected endpoint or method. ({self.command} {self.path})"}
            else:
                status, body = 404, {"error": "not found"}
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = answer

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server


@pytest.fixture
def stand_in():
    started = []

    def _start(routes, **kwargs):
        started.append(serve(routes, **kwargs))
        return f"http://127.0.0.1:{started[-1].server_address[1]}"

    yield _start
    for server in started:
        server.shutdown()
        server.server_close()


def test_lm_studio_context_is_the_loaded_one_not_the_maximum(stand_in):
    remote = connect(stand_in(LM_STUDIO_ROUTES, unknown_200=True) + "/v1/")
    assert remote.kind == LM_STUDIO and remote.model == "gemma-3-4b-it"
    assert (remote.ctx, remote.trained_ctx, remote.ctx_source) == (4096, 131072, "lm_studio_loaded")


def test_ollama_context_is_what_the_runner_holds(stand_in):
    remote = connect(stand_in(OLLAMA_ROUTES))
    assert remote.kind == OLLAMA and remote.model == "qwen3:0.6b"
    assert (remote.ctx, remote.ctx_source, remote.trained_ctx) == (4096, "ollama_ps", 40960)
    client = client_for_remote(remote)
    try:
        assert client.ctx_per_slot == 4096 and client.model == "qwen3:0.6b"
        assert client._endpoint([{"role": "user", "content": "hi"}], {}, True)[1]["model"] == "qwen3:0.6b"
    finally:
        client.close()


def test_ollama_without_a_loaded_model_reads_num_ctx(stand_in):
    routes = {**OLLAMA_ROUTES, ("GET", "/api/ps"): {"models": []}}
    remote = connect(stand_in(routes))
    assert (remote.ctx, remote.ctx_source) == (8192, "ollama_num_ctx")


def test_unknown_context_is_said_and_guarded_low(stand_in):
    routes = {**OLLAMA_ROUTES, ("GET", "/api/ps"): {"models": []}, ("POST", "/api/show"): {"parameters": ""}}
    remote = connect(stand_in(routes))
    assert remote.ctx is None and remote.guard_ctx == UNKNOWN_CTX_GUARD
    assert "does not say how large its context is" in remote.summary().render("en")


def test_a_key_is_asked_for_and_a_wrong_one_refused_in_words(stand_in):
    url = stand_in(OLLAMA_ROUTES, key="secret")
    with pytest.raises(errors.ChatError) as missing:
        connect(url)
    assert missing.value.kind == errors.AUTH
    assert missing.value.message.render("en") == f"The server at {url} wants an API key."
    with pytest.raises(errors.ChatError) as wrong:
        connect(url, "guess")
    assert wrong.value.message.render("en") == f"The server at {url} refused this API key."
    assert "guess" not in json.dumps(wrong.value.to_dict()) and "secret" not in repr(connect(url, "secret"))


def test_nothing_listening_is_unreachable():
    with pytest.raises(errors.ChatError) as caught:
        connect("http://127.0.0.1:9", timeout_s=2)
    assert caught.value.kind == errors.UNREACHABLE


@pytest.mark.parametrize("text, url", [("192.168.1.5:8080", "http://192.168.1.5:8080"),
                                       ("http://host:1234/v1/", "http://host:1234"),
                                       ("https://example.org", "https://example.org")])
def test_addresses_are_normalized(text, url):
    assert normalize_url(text) == url


@pytest.mark.parametrize("text", ["", "ftp://x", "http://", "http://host:99999", "my server:8080",
                                  "http://[::1"])
def test_what_is_no_address_is_said(text):
    with pytest.raises(UserError):
        normalize_url(text)


def test_another_model_of_ollama_has_no_known_context(stand_in):
    remote = connect(stand_in(OLLAMA_ROUTES)).with_model("llama3:8b")
    assert remote.model == "llama3:8b" and remote.ctx is None and remote.guard_ctx == UNKNOWN_CTX_GUARD


def test_a_model_still_loading_is_waited_for_within_a_bound(stand_in):
    url = stand_in(OLLAMA_ROUTES)
    slept: list[float] = []
    with pytest.raises(errors.ChatError) as caught:
        connect(stand_in({}, loading=True), wait_loading_s=1.0, sleep=slept.append)
    assert caught.value.kind == errors.LOADING and sum(slept) >= 1.0
    assert connect(url, wait_loading_s=1.0, sleep=slept.append).kind == OLLAMA
