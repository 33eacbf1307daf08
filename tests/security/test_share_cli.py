"""`serve --share` on the command line: IPv6 addresses are read as addresses (their colons are not a port), and a
share port that is taken is one JSON error event under --json, exit 1, no traceback."""

from __future__ import annotations

import argparse
import json
import socket

import httpx
import pytest

from app.cli.serve import share_address
from app.core.launch.ports import find_free_port
from tests.integration.cli.test_supervisor_cli import serve
from tests.security.share_serve import read_until_shared


@pytest.mark.parametrize(("text", "expected"), [
    ("[::1]:8099", ("::1", 8099)), ("[::1]", ("::1", 8090)), ("::1", ("::1", 8090)), ("[::]:0", ("::", 0)),
    ("fe80::1:8099", ("fe80::1:8099", 8090)),  # a bare IPv6 address: all of it, never "fe80::1" port 8099
    ("0.0.0.0", ("0.0.0.0", 8090)), ("192.168.1.5:0", ("192.168.1.5", 0)), ("localhost:8100", ("localhost", 8100)),
])
def test_ipv6_and_ipv4_share_addresses_are_read_as_written(text, expected):
    assert share_address(text) == expected


@pytest.mark.parametrize("bad", ["", ":8090", "host:port", "host:70000", "[::1", "[::1]8099", "[nothost]:80",
                                 "[::1]:port", "1:2:3:zz"])
def test_a_bad_share_address_gets_a_sentence_that_shows_the_ipv6_form(bad):
    with pytest.raises(argparse.ArgumentTypeError) as caught:
        share_address(bad)
    assert "[::1]:8090" in str(caught.value) and "HOST:PORT" in str(caught.value)


@pytest.mark.slow
def test_serve_json_says_a_taken_share_port_in_one_error_event(tiny_model, llama_server_bin):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        share_port = taken.getsockname()[1]
        proc = serve(str(tiny_model), "--backend", "llama-server", "--server-bin", llama_server_bin,
                     "--port", str(find_free_port()), "--ctx", "512", "--share", f"127.0.0.1:{share_port}", "--json")
        try:
            out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
    events = [json.loads(line) for line in out.splitlines()]  # every line is JSON
    errors = [event for event in events if event["event"] == "error"]
    assert proc.returncode == 1 and "Traceback" not in err, err
    assert len(errors) == 1, events
    error = errors[0]["error"]  # the error object every --json command prints
    assert error["message"].startswith(f"Sharing cannot listen on 127.0.0.1 port {share_port}: ")
    assert error["fix"] and error["evidence"]


@pytest.mark.slow
def test_serve_shares_on_an_ipv6_address(tiny_model, llama_server_bin):
    share_port = find_free_port()
    proc = serve(str(tiny_model), "--backend", "llama-server", "--server-bin", llama_server_bin,
                 "--port", str(find_free_port()), "--ctx", "512", "--share", f"[::1]:{share_port}", "--json")
    try:
        events, share = read_until_shared(proc)
        assert share is not None, events[-5:]
        assert share["urls"] == [f"http://[::1]:{share_port}"]
        assert "for programs on this computer only" in share["message"] and "(s)" not in share["message"]
        answer = httpx.get(f"http://[::1]:{share_port}/health", timeout=30)
        assert answer.status_code == 200, answer.text
    finally:
        proc.kill()
        proc.communicate(timeout=30)
