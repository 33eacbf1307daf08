"""The share's request limit: as many answers as slots, then a Retry-After from how long answers take."""

from __future__ import annotations

from app.core.chat import errors
from app.core.chat.classify import classify_http
from app.core.server.request_limit import DEFAULT_RETRY_S, RequestLimit


def test_beyond_the_slots_nobody_enters():
    limit = RequestLimit(2)
    first, second = limit.try_enter(), limit.try_enter()
    assert first and second and limit.try_enter() is None and limit.refused == 1
    limit.leave(first)
    assert limit.try_enter() is not None and limit.active == 2


def test_retry_after_follows_recent_answers(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr("app.core.server.request_limit.time.monotonic", lambda: clock[0])
    limit = RequestLimit(1)
    assert limit.retry_after_s() == DEFAULT_RETRY_S  # nothing measured yet
    ticket = limit.try_enter()
    clock[0] += 12.0
    limit.leave(ticket)
    limit.try_enter()
    clock[0] += 4.0
    assert limit.retry_after_s() == 8  # a 12 s answer, 4 s in


def test_429_is_a_busy_sentence_with_the_seconds():
    error = classify_http(429, '{"error":{"code":429,"message":"busy"}}', "r", retry_after="7")
    assert error.kind == errors.BUSY and "try again in 7 s" in error.message.render("en")


def test_an_absolute_url_is_not_forwarded_anywhere():
    import socket

    from app.core.server.share_proxy import ShareProxy

    proxy = ShareProxy("http://127.0.0.1:9", api_key="k", port=0)
    proxy.start()
    try:
        with socket.create_connection(("127.0.0.1", proxy.bound_port)) as sock:
            sock.sendall(b"GET http://example.org/v1/models HTTP/1.1\r\nHost: example.org\r\n\r\n")
            assert sock.recv(200).startswith(b"HTTP/1.1 400")
    finally:
        proxy.close()


def test_a_server_that_listens_on_the_network_itself_is_said(tiny_model):
    from app.core.launch.config import LaunchConfig
    from app.core.server.lan_share import LanShare, ShareSettings
    from app.core.server.supervisor import Supervisor

    for host, said in (("127.0.0.1", False), ("0.0.0.0", True)):
        supervisor = Supervisor(LaunchConfig(model=str(tiny_model), host=host))
        share = LanShare(supervisor, ShareSettings(port=0))
        assert ("without this limit" in share.summary().render("en")) is said
        supervisor.close()


def test_memory_of_a_server_elsewhere_is_not_a_local_process():
    from app.core.chat.selftest import server_pid_for

    assert server_pid_for("http://192.0.2.7:8080") is None
