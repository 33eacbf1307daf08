"""`serve` keys its server for this run: the JSON stream has one ``key`` event, a pipe sees the key masked with the
way to connect another program, the child's command line never holds it, and ``--no-key`` lets programs in."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import httpx
import psutil

from app.core.launch.ports import find_free_port
from tests.integration.cli.test_supervisor_cli import serve

CHAT = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2}


def _until_ready(proc, json_mode: bool) -> list:
    seen = []
    for line in proc.stdout:
        seen.append(json.loads(line) if json_mode else line)
        if json_mode and seen[-1]["event"] == "key" or not json_mode and "/v1" in line:
            return seen
        if json_mode and seen[-1].get("state") == "failed" or not json_mode and "Full log" in line:
            break
    raise AssertionError(f"not ready: {seen[-10:]}; {proc.stderr.read() if proc.poll() is not None else ''}")


def _stop(proc) -> str:
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    return out


def _chat(url: str, key: str | None = None) -> int:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.post(f"{url}/chat/completions", json=CHAT, headers=headers, timeout=60, trust_env=False).status_code


def test_json_gives_the_key_once_and_the_child_command_line_never(tiny_model, llama_server_bin):
    proc = serve(str(tiny_model), "--backend", "llama-server", "--server-bin", llama_server_bin,
                 "--port", str(find_free_port()), "--ctx", "256", "--json")
    try:
        events = _until_ready(proc, json_mode=True)
        key, url = events[-1]["api_key"], events[-1]["url"]
        ready = next(e for e in events if e.get("state") == "ready")
        assert len(key) >= 32 and url == ready["url"] + "/v1"
        assert key not in json.dumps(events[:-1])  # the command line and every other event lack it
        assert key not in Path(f"/proc/{ready['pid']}/cmdline").read_bytes().decode()
        assert _chat(url) == 401 and _chat(url, key) == 200
    finally:
        rest = _stop(proc)
    assert key not in rest


def test_a_pipe_sees_the_key_masked_with_the_way_to_connect(tiny_model, llama_server_bin):
    proc = serve(str(tiny_model), "--backend", "llama-server", "--server-bin", llama_server_bin,
                 "--port", str(find_free_port()), "--ctx", "256")
    try:
        lines = _until_ready(proc, json_mode=False)
        child = psutil.Process(proc.pid).children()[0]
        key = child.environ()["LLAMA_API_KEY"]  # readable by this user only, unlike the command line
        assert key not in " ".join(child.cmdline())
    finally:
        out = "".join(lines) + _stop(proc)
    told = lines[-1]
    assert key[:4] + "\u2022" in told and "--api-key" in told and "--no-key" in told, lines
    assert key not in out and "command:" in out


def test_no_key_lets_programs_on_this_computer_in(tiny_model):
    proc = serve(str(tiny_model), "--backend", "embedded", "--port", str(find_free_port()), "--ctx", "256",
                 "--no-key")
    try:
        lines = _until_ready(proc, json_mode=False)
        assert "without a key" in lines[-1]
        url = lines[-1].split(" to ", 1)[1].split(" ", 1)[0]
        assert _chat(url) == 200
    finally:
        _stop(proc)
