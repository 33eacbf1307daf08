"""Real model servers for the chat tests (no tests here): llama-cpp-python's server and llama-server.

Each test module starts one server per backend and reuses it; servers run with one thread so the
2-core test machines stay responsive.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama

EMBEDDED, LLAMA_SERVER = "embedded", "llama-server"
BACKENDS = (EMBEDDED, LLAMA_SERVER)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class RunningServer:
    backend: str
    proc: subprocess.Popen
    url: str
    port: int
    ctx: int
    log_path: Path

    def log_tail(self, n: int = 20) -> list[str]:
        try:
            return self.log_path.read_text(errors="replace").splitlines()[-n:]
        except OSError:
            return []

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


def server_argv(backend: str, model: Path, ctx: int, port: int, server_bin: str | None, extra=()) -> list[str]:
    if backend == EMBEDDED:
        return [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--n_ctx", str(ctx),
                "--host", "127.0.0.1", "--port", str(port), "--n_threads", "1", *extra]
    return [server_bin, "-m", str(model), "-c", str(ctx), "--host", "127.0.0.1", "--port", str(port),
            "-np", "1", "-t", "1", "--no-webui", *extra]


def _die_with_parent() -> None:
    """Linux: the server gets SIGKILL when the test process dies, even if pytest itself is killed."""
    import ctypes

    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def spawn(backend: str, model: Path, ctx: int, log_dir: Path, server_bin: str | None = None, *, port=None,
          extra=()) -> RunningServer:
    port = port or free_port()
    log_path = log_dir / f"{backend}-{port}.log"
    log = open(log_path, "ab")
    proc = subprocess.Popen(server_argv(backend, model, ctx, port, server_bin, extra), stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True,
                            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
    log.close()
    return RunningServer(backend, proc, f"http://127.0.0.1:{port}", port, ctx, log_path)


def wait_ready(server: RunningServer, timeout: float = 60.0) -> RunningServer:
    path = "/v1/models" if server.backend == EMBEDDED else "/health"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(f"{server.backend} exited {server.proc.returncode}: {server.log_tail()}")
        try:
            if httpx.get(server.url + path, timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    server.kill()
    raise RuntimeError(f"{server.backend} not ready after {timeout}s: {server.log_tail()}")


def start_server(backend: str, model: Path, ctx: int, log_dir: Path, server_bin: str | None = None,
                 **kw) -> RunningServer:
    return wait_ready(spawn(backend, model, ctx, log_dir, server_bin, **kw))


def slower_model(directory: Path) -> Path:
    """Still tiny on disk, but slow enough per token (~ms) that stopping early is measurable."""
    path = directory / "slower.gguf"
    if not path.exists():
        write_tiny_llama(path, TinyModelSpec(n_layers=6, n_embd=512, n_head=8, n_head_kv=8, n_ff=2048,
                                             name="slower-random-llama"))
    return path


# Random weights emit random bytes; llama-cpp-python holds back pieces that look like unfinished UTF-8, so
# streams would come in bursts. Tests that time pieces keep the model to ASCII and away from end-of-text.
ASCII_ONLY = {"logit_bias": {str(token): -100 for token in [2, *range(3 + 0x80, 3 + 0x100)]}}
