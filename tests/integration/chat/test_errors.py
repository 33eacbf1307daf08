"""Every failure class reaches the user as a typed ChatError with a sentence and a next step.

The answers here come from a small scripted HTTP server that replays the exact bodies llama-server and
llama-cpp-python send (FACTS.md); the crash and overflow cases against the real servers are in the other
test_chat_* modules.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from app.core.chat import errors
from app.core.chat.client import ChatClient
from app.core.chat.params import ChatParams
from app.core.chat.session import DONE, ERROR, WAITING, ChatSession
from app.core.problem import Fix
from tests.integration.chat.test_harness import free_port

LOADING_BODY = {"error": {"message": "Loading model", "type": "unavailable_error", "code": 503}}
PROPS = {"default_generation_settings": {"n_ctx": 1024}, "total_slots": 1, "model_path": "m.gguf"}


def sse(*payloads, done=True) -> list[bytes]:
    chunks = [b": keep-alive\n\n"] + [f"data: {json.dumps(p)}\n\n".encode() for p in payloads]
    return chunks + ([b"data: [DONE]\n\n"] if done else [])


def delta(text, finish=None):
    return {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}]}


class Script:
    """What the fake server answers to POST /v1/chat/completions, one entry per request (last one repeats)."""

    def __init__(self):
        self.replies: list[tuple[int, list[bytes], float]] = []
        self.request_ids: list[str] = []
        self.answer_ids: list[str] = []  # the streamed chat requests' ids, without /tokenize and /props

    def next(self):
        return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]


@pytest.fixture
def fake():
    script = Script()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _send(self, status, chunks, delay=0.0, content_type="application/json"):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Connection", "close")
            self.end_headers()
            for chunk in chunks:
                if delay:
                    time.sleep(delay)
                self.wfile.write(chunk)
                self.wfile.flush()

        def do_GET(self):
            script.request_ids.append(self.headers.get("X-Request-Id", ""))
            if self.path == "/props":
                self._send(200, [json.dumps(PROPS).encode()])
            else:
                self._send(404, [b'{"error":{"message":"not found"}}'])

        def do_POST(self):
            script.request_ids.append(self.headers.get("X-Request-Id", ""))
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path == "/tokenize":
                self._send(200, [json.dumps({"tokens": list(body["content"].encode())}).encode()])
                return
            if not body.get("stream"):  # calibration request
                calibration = {"choices": [], "usage": {"prompt_tokens": 40, "completion_tokens": 1}}
                self._send(200, [json.dumps(calibration).encode()])
                return
            script.answer_ids.append(self.headers.get("X-Request-Id", ""))
            status, chunks, delay = script.next()
            self._send(status, chunks, delay, "text/event-stream" if status == 200 else "application/json")

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    script.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield script
    server.shutdown()
    server.server_close()


@pytest.fixture
def chat_client():
    """Factory: chat_client(url, **options) -> a ChatClient, closed after the test with its pooled connection (left
    to the garbage collector, the socket is reported unclosed during a later test)."""
    made: list[ChatClient] = []

    def _make(url: str, **options) -> ChatClient:
        made.append(ChatClient(url, **options))
        return made[-1]

    yield _make
    for client in made:
        client.close()


def run(session: ChatSession, text="hello"):
    return list(session.send(text))


def test_503_while_loading_waits_then_answers(fake, chat_client):
    fake.replies = [(503, [json.dumps(LOADING_BODY).encode()], 0)] * 3 + [(200, sse(delta("hi"), delta("", "stop")), 0)]
    events = run(ChatSession(chat_client(fake.url), save=False, sleep=lambda s: None))
    kinds = [e.kind for e in events]
    assert kinds[0] == WAITING and kinds[-1] == DONE
    assert "still loading" in events[0].notice.render("en")


def test_503_forever_gives_a_bounded_loading_error(fake, chat_client):
    fake.replies = [(503, [json.dumps(LOADING_BODY).encode()], 0)]
    slept = []
    events = run(ChatSession(chat_client(fake.url), save=False, loading_wait_s=5, sleep=slept.append))
    error = events[-1].error
    assert events[-1].kind == ERROR and error.kind == errors.LOADING
    assert 5 <= sum(slept) <= 8 and max(slept) <= 2.0


def test_401_is_an_api_key_problem(fake, chat_client):
    fake.replies = [(401, [b'{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}'], 0)]
    error = run(ChatSession(chat_client(fake.url, api_key="wrong"), save=False))[-1].error
    assert error.kind == errors.AUTH and "API key" in error.message.render("en") and error.request_id


def test_500_carries_the_server_log_tail(fake, chat_client):
    fake.replies = [(500, [b'{"error":{"code":500,"message":"failed to decode","type":"server_error"}}'], 0)]
    client = chat_client(fake.url, log_tail=lambda n: ["decode: failed to find a memory slot"])
    error = run(ChatSession(client, save=False))[-1].error
    assert error.kind == errors.SERVER_ERROR
    assert "failed to decode" in error.message.render("en")
    assert "decode: failed to find a memory slot" in error.evidence


def test_mid_stream_error_keeps_the_partial_answer(fake, chat_client):
    fake.replies = [(200, sse(delta("par"), delta("tial"), {"error": {"code": 500, "message": "boom"}}, done=False), 0)]
    session = ChatSession(chat_client(fake.url), save=False)
    events = run(session)
    assert [e.text for e in events if e.kind == "delta"] == ["par", "tial"]
    assert events[-1].error.kind == errors.SERVER_ERROR
    answer = session.conversation.messages[-1]
    assert (answer.content, answer.status) == ("partial", "interrupted")
    assert session.conversation.pending_message().content == "hello"


def test_malformed_chunk(fake, chat_client):
    fake.replies = [(200, [b"data: {this is not json\n\n"], 0)]
    error = run(ChatSession(chat_client(fake.url), save=False))[-1].error
    assert error.kind == errors.MALFORMED and "{this is not json" in error.evidence[0]


def test_read_timeout_is_too_slow_and_offers_to_wait_longer(fake, chat_client):
    fake.replies = [(200, sse(delta("a"), delta("", "stop")), 1.0)]
    error = run(ChatSession(chat_client(fake.url, read_timeout=0.3), save=False))[-1].error
    assert error.kind == errors.TOO_SLOW and "still running" in error.message.render("en")
    assert error.action.kind is Fix.WAIT_LONGER


def test_connection_refused_is_unreachable_and_message_kept(chat_client):
    session = ChatSession(chat_client(f"http://127.0.0.1:{free_port()}", connect_timeout=1), save=False)
    error = run(session)[-1].error
    assert error.kind == errors.UNREACHABLE
    assert session.conversation.pending_message().content == "hello"


def test_every_request_carries_a_request_id(fake, chat_client):
    fake.replies = [(200, sse(delta("x"), delta("", "length")), 0)]
    events = run(ChatSession(chat_client(fake.url), params=ChatParams(max_tokens=1), save=False))
    stats = events[-1].stats
    assert stats.finish_reason == "length" and "cut at max tokens" in stats.finish_text().render("en")
    assert fake.request_ids and all(len(rid) == 32 for rid in fake.request_ids)
    assert len(set(fake.request_ids)) == len(fake.request_ids)
    # the answer's id is its chat request's, not that of the /tokenize that counts a "length" answer after it
    assert len(fake.answer_ids) == 1 and stats.request_id == fake.answer_ids[0]
