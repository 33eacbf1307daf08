"""Prove that a llama-server build generates on the graphics card: serve a tiny model with every layer offloaded,
generate a few tokens, and find the card's own model buffer in the log.

A build that cannot use the card still generates (on the processor) and still prints ``offloaded 2/2 layers to
GPU`` (app/core/diagnosis/offload.py), so the proof is the device's buffer line that llama.cpp prints at load
(``load_tensors:        CUDA0 model buffer size =  4168.09 MiB``, src/llama-model.cpp; the llama-server of b11434
prints it at ``-lv 4``, measured here with its CPU build: ``load_tensors:   CPU_Mapped model buffer size =
0.37 MiB``).
"""

from __future__ import annotations

import logging
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.core.launch.discovery import server_argv_prefix
from app.core.launch.ports import find_free_port
from app.core.process.child import ChildProcess

logger = logging.getLogger(__name__)

GENERATE_TOKENS = 4
READY_TIMEOUT_S = 180.0  # a CUDA build may compile kernels for a new card on its first start
ANSWER_TIMEOUT_S = 60.0
MAX_LINES = 400
MAX_LINE_CHARS = 2000  # a log line is under 200; a build that prints megabytes without a line break keeps only this


@dataclass(frozen=True)
class GenerationCheck:
    """``tokens`` generated (0: none), whether the device's model buffer was seen, why not when it failed, and
    the server's last lines."""

    tokens: int
    on_device: bool
    failure: str | None
    tail: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return self.failure is None and self.tokens > 0 and self.on_device


def _printable(line: str) -> str:
    """A line of the server's output fit for evidence: control characters (a terminal escape, NULs) escaped."""
    return "".join(char if char.isprintable() else ascii(char)[1:-1] for char in line)


def device_buffer_seen(lines: list[str], device: str) -> bool:
    pattern = re.compile(rf"(?:^|\s){re.escape(device)} model buffer size =\s*[\d.]+ MiB")
    return any(pattern.search(line) for line in lines)


def generate_on_device(launcher: Path, device: str, model: Path, *,
                       should_stop: Callable[[], bool] = lambda: False) -> GenerationCheck:
    """Serve ``model`` with ``launcher`` on 127.0.0.1, all layers on the GPU, and generate a few tokens."""
    import httpx

    lines: list[str] = []
    lock = threading.Lock()

    def on_line(_stream: str, text: str) -> None:
        with lock:
            lines.append(_printable(text[:MAX_LINE_CHARS]))
            del lines[:-MAX_LINES]

    port, key = find_free_port(), secrets.token_hex(16)
    argv = [*server_argv_prefix(launcher), "-m", str(model), "--host", "127.0.0.1", "--port", str(port),
            "-c", "128", "-ngl", "99", "-np", "1", "--no-warmup", "-lv", "4", "--api-key", key]
    try:
        child = ChildProcess(argv, on_line=on_line, on_exit=lambda _child, _code: None)
    except OSError as error:
        return GenerationCheck(0, False, f"the server could not start: {error}", ())
    try:
        failure = _wait_ready(child, port, should_stop)
        tokens = 0
        if failure is None:
            tokens, failure = _complete(httpx, port, key)
    finally:
        child.stop(grace_s=3.0)
    with lock:
        seen = list(lines)
    return GenerationCheck(tokens, device_buffer_seen(seen, device), failure, tuple(seen[-25:]))


def _wait_ready(child: ChildProcess, port: int, should_stop: Callable[[], bool]) -> str | None:
    import httpx

    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if should_stop():
            return "stopped"
        if not child.running:
            return f"the server stopped before it was ready (exit code {child.returncode})"
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2.0).status_code == 200:
                return None
        except httpx.HTTPError:
            pass  # not listening yet
        time.sleep(0.2)
    return f"the server was not ready within {READY_TIMEOUT_S:.0f} s"


def _complete(httpx, port: int, key: str) -> tuple[int, str | None]:
    try:
        reply = httpx.post(f"http://127.0.0.1:{port}/completion", timeout=ANSWER_TIMEOUT_S,
                           headers={"Authorization": f"Bearer {key}"},
                           json={"prompt": "Hello", "n_predict": GENERATE_TOKENS, "ignore_eos": True,
                                 "temperature": 0})
        tokens = int(reply.json().get("tokens_predicted", 0))
    except (httpx.HTTPError, ValueError, AttributeError) as error:
        return 0, f"the completion failed: {error}"
    return tokens, None if tokens > 0 else "it generated no tokens"
