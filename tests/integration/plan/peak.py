"""Peak RSS of a real server, started as the app starts it, after one request whose prompt fills part of its context."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from app.core.launch.config import BACKEND_LLAMA_SERVER, LaunchConfig
from app.core.server.supervisor import State, Supervisor

TEXT = "The river runs to the sea, and the sea gives the rain back to the hills. "


@dataclass(frozen=True)
class Peak:
    rss: int  # VmHWM right after the request, bytes
    prompt_tokens: int


def _auth(supervisor: Supervisor) -> dict:
    """The header the app's own clients send: the key made for this server."""
    return {"Authorization": f"Bearer {supervisor.api_key}"}


def _vm_hwm(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))


def _server_prompt(url: str, tokens: int, headers: dict) -> int:
    """llama-server: a token list of exactly ``tokens`` to /completion; the tokens it evaluated."""
    piece = httpx.post(url + "/tokenize", json={"content": TEXT}, timeout=30, headers=headers).json()["tokens"]
    prompt = (piece * (tokens // len(piece) + 1))[:tokens]
    reply = httpx.post(url + "/completion", timeout=900, headers=headers,
                       json={"prompt": prompt, "n_predict": 1, "cache_prompt": False, "temperature": 0})
    assert reply.status_code == 200, reply.text[:300]
    return int(reply.json()["tokens_evaluated"])


def _builtin_prompt(url: str, tokens: int, headers: dict) -> int:
    """The built-in engine takes text: TEXT repeated to ``tokens`` by its own count; the prompt tokens it read."""
    counted = httpx.post(url + "/extras/tokenize", json={"input": TEXT}, timeout=60, headers=headers)
    per_text = len(counted.json()["tokens"])
    reply = httpx.post(url + "/v1/completions", timeout=900, headers=headers,
                       json={"prompt": TEXT * max(1, tokens // per_text), "max_tokens": 1, "temperature": 0})
    assert reply.status_code == 200, reply.text[:300]
    return int(reply.json()["usage"]["prompt_tokens"])


def _server_text_prompt(url: str, tokens: int, headers: dict) -> int:
    """llama-server: TEXT repeated to at most ``tokens`` by its /tokenize, to /completion as the chat sends text,
    keeping the prompt cache (a longer prompt then evaluates only its new part); the tokens of the text."""
    def count(text: str) -> int:
        return len(httpx.post(url + "/tokenize", json={"content": text}, timeout=60, headers=headers).json()["tokens"])

    reps = max(1, tokens // count(TEXT))
    reps = max(1, int(reps * tokens / count(TEXT * reps)))  # fewer tokens a repeat once they merge
    while reps > 1 and count(TEXT * reps) > tokens:
        reps -= max(1, reps // 200)
    reply = httpx.post(url + "/completion", timeout=900, headers=headers,
                       json={"prompt": TEXT * reps, "n_predict": 1, "cache_prompt": True, "temperature": 0})
    assert reply.status_code == 200, reply.text[:300]
    return count(TEXT * reps)


def peaks_after_text_prompts(config: LaunchConfig, fills: tuple[float, ...]) -> list[Peak]:
    """llama-server ``config`` started, then one text prompt per fill, each extending the last, the peak after
    each; the server is always stopped."""
    supervisor = Supervisor(config, auto_restart=False, ready_timeout_s=180)
    try:
        supervisor.start()
        state = supervisor.wait_for({State.READY, State.FAILED, State.CRASHED}, 180)
        assert state is State.READY, [line.text for line in supervisor.tail(20)]
        peaks = []
        for fill in fills:
            tokens = _server_text_prompt(supervisor.url, int(config.ctx * fill), _auth(supervisor))
            peaks.append(Peak(_vm_hwm(supervisor.pid), tokens))
        return peaks
    finally:
        supervisor.close()


def peak_after_prompt(config: LaunchConfig, fill: float) -> Peak:
    """Start ``config``, send one prompt of ``fill`` × its context, read the peak; the server is always stopped."""
    supervisor = Supervisor(config, auto_restart=False, ready_timeout_s=180)
    try:
        supervisor.start()
        state = supervisor.wait_for({State.READY, State.FAILED, State.CRASHED}, 180)
        assert state is State.READY, [line.text for line in supervisor.tail(20)]
        send = _server_prompt if config.backend == BACKEND_LLAMA_SERVER else _builtin_prompt
        tokens = send(supervisor.url, int(config.ctx * fill), _auth(supervisor))
        return Peak(_vm_hwm(supervisor.pid), tokens)
    finally:
        supervisor.close()
