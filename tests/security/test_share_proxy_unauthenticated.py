"""The share proxy against connections that have not shown a key: no place taken, no body read, no preflight
forwarded. The upstream is a closed port, so any request the proxy forwards answers 503: a 204, 413 or 401 here is
the proxy's own answer, given without the server."""

from __future__ import annotations

import socket
import time

import pytest

from app.core.server import share_proxy
from app.core.server.share_proxy import ShareProxy

KEY = "k" * 32


@pytest.fixture
def proxy():
    proxy = ShareProxy("http://127.0.0.1:9", api_key=KEY, port=0)
    proxy.start()
    yield proxy
    proxy.close()


def _ask(port: int, head: bytes, timeout: float = 10.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(head)
        return sock.recv(4096)


def test_a_preflight_is_answered_by_the_proxy_itself(proxy):
    answer = _ask(proxy.bound_port, b"OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: x\r\nOrigin: http://a.example\r\n"
                                    b"Access-Control-Request-Method: POST\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 204") and b"Access-Control-Allow-Headers: Authorization" in answer


@pytest.mark.parametrize("head", [
    b"GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 67108864\r\n\r\n",
    b"OPTIONS /v1/models HTTP/1.1\r\nHost: x\r\nContent-Length: 67108864\r\n\r\n",
    b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 67108864\r\n\r\n",
])
def test_a_body_without_a_key_is_refused_before_it_is_read(proxy, head):
    started = time.monotonic()
    answer = _ask(proxy.bound_port, head)  # the 64 MiB announced are never sent: an answer proves none was awaited
    assert answer.split(b"\r\n", 1)[0] in (b"HTTP/1.1 413 Request Entity Too Large", b"HTTP/1.1 401 Unauthorized",
                                           b"HTTP/1.1 204 No Content")
    assert time.monotonic() - started < share_proxy.IDLE_READ_S  # not a read timeout


def test_connections_without_a_head_do_not_turn_a_keyed_request_away(proxy):
    idle = [socket.create_connection(("127.0.0.1", proxy.bound_port)) for _ in range(share_proxy.MAX_CONNECTIONS + 36)]
    try:
        answer = _ask(proxy.bound_port, f"GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n\r\n"
                      .encode())
        assert answer.startswith(b"HTTP/1.1 503"), answer  # forwarded to the (closed) server, not refused as busy
        assert proxy._server.waiting_count <= share_proxy.MAX_WAITING_PER_ADDRESS
    finally:
        for sock in idle:
            sock.close()


@pytest.mark.slow  # waits out a real 1 s deadline, a line every 0.3 s
def test_a_head_sent_a_line_at_a_time_has_a_deadline(proxy, monkeypatch):
    monkeypatch.setattr(share_proxy, "HEAD_DEADLINE_S", 1.0)
    with socket.create_connection(("127.0.0.1", proxy.bound_port), timeout=30) as sock:
        sock.sendall(b"GET /v1/models HTTP/1.1\r\n")
        started, answer = time.monotonic(), b"x"
        try:
            while answer and time.monotonic() - started < 20:
                sock.sendall(b"X-Slow: 1\r\n")
                time.sleep(0.3)
                sock.settimeout(0.01)
                try:
                    answer = sock.recv(100)
                except TimeoutError:
                    answer = b"x"
                sock.settimeout(30)
        except OSError:
            answer = b""
        assert answer == b"" and time.monotonic() - started < 20  # cut, well before the per-read timeout
