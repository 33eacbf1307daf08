"""`gguf-launcher serve --share HOST:PORT`: the proxy in front of the real server wants the key printed once, and the
server itself stays on loopback."""

from __future__ import annotations

import json
import signal

import httpx
import pytest

from app.cli.serve import share_address
from app.core.launch.ports import find_free_port
from tests.integration.cli.test_supervisor_cli import serve

pytestmark = pytest.mark.slow


def test_the_share_wants_the_printed_key_and_the_server_stays_on_loopback(tiny_model, llama_server_bin):
    port, share_port = find_free_port(), find_free_port()
    proc = serve(str(tiny_model), "--backend", "llama-server", "--server-bin", llama_server_bin, "--port", str(port),
                 "--ctx", "512", "--share", f"127.0.0.1:{share_port}", "--json")
    events = []
    try:
        for line in proc.stdout:
            events.append(json.loads(line))
            if events[-1]["event"] == "state" and events[-1].get("state") in ("ready", "failed"):
                break
        assert events[-1]["state"] == "ready", events[-5:]
        share = next(e for e in events if e["event"] == "share")
        assert share["urls"] == [f"http://127.0.0.1:{share_port}"] and share["max_active"] == 1
        url = share["urls"][0] + "/v1/completions"
        body = {"prompt": "Hello", "max_tokens": 2}
        assert httpx.post(url, json=body, timeout=30).status_code == 401
        wrong = httpx.post(url, json=body, headers={"Authorization": "Bearer nope"}, timeout=30)
        assert wrong.status_code == 401
        right = httpx.post(url, json=body, headers={"Authorization": f"Bearer {share['api_key']}"}, timeout=60)
        assert right.status_code == 200 and right.json()["choices"], right.text
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert share["api_key"] not in err  # the key is printed once, on stdout, not in the log lines


def test_a_share_address_is_host_or_host_and_port():
    import argparse

    assert share_address("0.0.0.0") == ("0.0.0.0", 8090) and share_address("192.168.1.5:0") == ("192.168.1.5", 0)
    for bad in ("", ":8090", "host:port", "host:70000"):
        with pytest.raises(argparse.ArgumentTypeError):
            share_address(bad)
