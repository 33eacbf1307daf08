"""Attacks on `serve --share` with a real llama-server behind it, on loopback: slow-header connections, and large
bodies sent without a key. Each prints its figure (run with -s to see it)."""

from __future__ import annotations

import signal
import socket
import time
from pathlib import Path

import httpx
import pytest

from app.core.launch.ports import find_free_port
from tests.integration.cli.test_supervisor_cli import serve
from tests.security.share_serve import read_until_shared

pytestmark = pytest.mark.slow

SLOW_CONNECTIONS = 100
BODY = 64 * 1024 * 1024


@pytest.fixture
def share(tiny_model, llama_server_bin):
    share_port = find_free_port()
    proc = serve(str(tiny_model), "--backend", "llama-server", "--server-bin", llama_server_bin,
                 "--port", str(find_free_port()), "--ctx", "512", "--share", f"127.0.0.1:{share_port}", "--json")
    try:
        events, info = read_until_shared(proc)
        assert info and "ready" in [e.get("state") for e in events], events[-5:]
        yield proc, share_port, info["api_key"]
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    finally:
        proc.kill()


def _rss_kib(pid: int) -> dict[str, int]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return {name: int(fields[name].split()[0]) for name in ("VmRSS", "VmHWM")}


def test_slow_header_connections_do_not_turn_a_keyed_request_away(share):
    proc, port, key = share
    slow = [socket.create_connection(("127.0.0.1", port)) for _ in range(SLOW_CONNECTIONS)]
    try:
        for sock in slow:  # each sends a line of its head and never finishes it
            sock.sendall(b"GET /v1/models HTTP/1.1\r\nX-Slow: 1\r\n")
        time.sleep(1.0)
        started = time.monotonic()
        answer = httpx.post(f"http://127.0.0.1:{port}/v1/completions", json={"prompt": "Hello", "max_tokens": 2},
                            headers={"Authorization": f"Bearer {key}"}, timeout=60)
        took = time.monotonic() - started
        print(f"\nkeyed request under {SLOW_CONNECTIONS} slow connections: {answer.status_code} in {took:.2f} s")
        assert answer.status_code == 200 and answer.json()["choices"], answer.text
        assert took < 30
    finally:
        for sock in slow:
            sock.close()


def _send_unauthenticated_body(port: int, head: bytes) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(head % BODY)
        chunk = b"\0" * (1024 * 1024)
        try:
            for _ in range(BODY // len(chunk)):
                sock.sendall(chunk)
            return sock.recv(100).split(b"\r\n", 1)[0].decode()
        except OSError:  # refused before the body was read: the proxy closed while it was still being sent
            return "closed while sending"


def test_unauthenticated_bodies_are_not_held(share):
    proc, port, _ = share
    before = _rss_kib(proc.pid)
    heads = (b"OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n",
             b"GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n")
    outcomes = [_send_unauthenticated_body(port, heads[i % 2]) for i in range(16)]
    after = _rss_kib(proc.pid)
    print(f"\nproxy under 16 unauthenticated 64 MiB bodies: RSS {before['VmRSS'] // 1024} MiB before, peak "
          f"{after['VmHWM'] // 1024} MiB, {after['VmRSS'] // 1024} MiB after; answers {sorted(set(outcomes))}")
    assert after["VmHWM"] - before["VmHWM"] < 64 * 1024  # less than one body's worth (KiB)
    assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=30).status_code == 200


def test_a_keyed_body_is_streamed_not_held(share):
    proc, port, key = share
    size = 48 * 1024 * 1024
    before = _rss_kib(proc.pid)
    answer = httpx.post(f"http://127.0.0.1:{port}/v1/completions", content=_zeros(size), timeout=120,
                        headers={"Authorization": f"Bearer {key}", "Content-Length": str(size),
                                 "Content-Type": "application/json"})
    after = _rss_kib(proc.pid)
    print(f"\nproxy passing a keyed 48 MiB body: peak {before['VmHWM'] // 1024} -> {after['VmHWM'] // 1024} MiB; "
          f"the server answered {answer.status_code}")
    assert answer.status_code in (400, 500) and "error" in answer.json()  # the server read it and refused the JSON
    assert after["VmHWM"] - before["VmHWM"] < 24 * 1024  # KiB: well under half of the body


def _zeros(size: int):
    chunk = b"0" * (1024 * 1024)
    for _ in range(size // len(chunk)):
        yield chunk
