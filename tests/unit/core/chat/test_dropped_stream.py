"""A stream that closes in the middle of the answer: a server that is then gone is a stopped server, not an HTTP error.

A SIGKILLed server's listening socket can still take a TCP connection for a moment while the kernel tears the
process down (what a busy machine made `selftest --url` see: `[server_error] ... (HTTP 0): the connection closed in
the middle of the answer`, then another round and `[server_crashed]`). The fake server here holds that moment open
on purpose: after dropping the stream it stops serving but keeps its listening socket a little longer, so the
test does not depend on timing. A server that drops a stream and goes on answering stays a server error.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import threading

import pytest

from app.core.chat import errors
from app.core.chat.client import ChatClient
from app.core.chat.params import ChatParams
from app.core.chat.selftest import run_selftest

DYING_WINDOW_S = 0.6  # how long the dead server's listening socket stays open without anyone serving it
_CHUNK = {"choices": [{"index": 0, "delta": {"content": "Hello"}, "finish_reason": None}]}
_LAST = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
         "usage": {"prompt_tokens": 10, "completion_tokens": 1}}


class DroppingServer(threading.Thread):
    """An OpenAI-like server: streams ``good_streams`` full answers, then drops the next stream in the middle.

    ``dies``: after the drop nothing is served any more and the listening socket closes ``DYING_WINDOW_S`` later
    (a killed process); otherwise it goes on answering every request."""

    def __init__(self, *, good_streams: int, dies: bool):
        super().__init__(daemon=True)
        self.good_streams, self.dies = good_streams, dies
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=16)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.streams = 0
        self.dropped = threading.Event()

    def run(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return  # closed
            if self._serve(conn) == "died":
                self.dropped.wait()
                threading.Event().wait(DYING_WINDOW_S)  # the kernel still holds the port; nobody answers on it
                self.listener.close()
                return

    def _serve(self, conn: socket.socket) -> str | None:
        with conn:
            method, path, request = _read_request(conn)
            if (method, path) == ("POST", "/v1/chat/completions") and not json.loads(request or b"{}").get("stream"):
                body = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello"},
                                                "finish_reason": "stop"}], "usage": _LAST["usage"]}).encode()
                conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}"
                             f"\r\nConnection: close\r\n\r\n".encode() + body)
                return None
            if (method, path) != ("POST", "/v1/chat/completions"):
                body = json.dumps({"default_generation_settings": {"n_ctx": 512}, "total_slots": 1}).encode()
                status = "200 OK" if path == "/props" else "404 Not Found"
                body = body if path == "/props" else b'{"error": {"message": "not here"}}'
                conn.sendall(f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}"
                             f"\r\nConnection: close\r\n\r\n".encode() + body)
                return None
            self.streams += 1
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
            conn.sendall(f"data: {json.dumps(_CHUNK)}\n\n".encode())
            if self.streams <= self.good_streams:
                conn.sendall(f"data: {json.dumps(_LAST)}\n\ndata: [DONE]\n\n".encode())
                return None
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
        self.dropped.set()
        return "died" if self.dies else None

    def close(self) -> None:
        try:
            self.listener.close()
        except OSError:
            pass


def _read_request(conn: socket.socket) -> tuple[str, str, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            break
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next((int(line.split(":", 1)[1]) for line in lines[1:] if line.lower().startswith("content-length:")), 0)
    while len(body) < length:
        piece = conn.recv(65536)
        if not piece:
            break
        body += piece
    method, path, _ = (lines[0].split(" ") + ["", "", ""])[:3]
    return method, path, body


@pytest.fixture
def serve():
    servers: list[DroppingServer] = []

    def _start(**kwargs) -> DroppingServer:
        server = DroppingServer(**kwargs)
        server.start()
        servers.append(server)
        return server

    yield _start
    for server in servers:
        server.close()


def _stream_failure(client: ChatClient) -> errors.ChatError:
    reply = client.stream([{"role": "user", "content": "hi"}], ChatParams(max_tokens=16))
    with pytest.raises(errors.ChatError) as caught:
        for _ in reply:
            pass
    return caught.value


def test_a_stream_dropped_by_a_server_that_is_then_gone_is_a_stopped_server(serve):
    server = serve(good_streams=0, dies=True)
    client = ChatClient(server.url, backend="llama-server")
    try:
        failure = _stream_failure(client)
    finally:
        client.close()
    assert failure.kind == errors.SERVER_CRASHED, failure.to_dict("en")
    assert "stopped" in failure.message.render("en")


def test_a_stream_dropped_by_a_server_that_goes_on_answering_stays_a_server_error(serve):
    server = serve(good_streams=0, dies=False)
    client = ChatClient(server.url, backend="llama-server")
    try:
        failure = _stream_failure(client)
    finally:
        client.close()
    assert failure.kind == errors.SERVER_ERROR, failure.to_dict("en")
    assert "middle of the answer" in failure.message.render("en")


def test_selftest_url_reports_a_server_killed_mid_stream_once_and_stops(serve):
    server = serve(good_streams=1, dies=True)
    client = ChatClient(server.url, backend="llama-server")
    try:
        report = run_selftest(client, rounds=5, long_answer=False, server_pid=os.getpid())
    finally:
        client.close()
    kinds = [(r.ok, (r.error or {}).get("kind")) for r in report.rounds]
    assert kinds == [(True, None), (False, errors.SERVER_CRASHED)], kinds
    assert report.skipped_rounds == 3 and not report.passed
