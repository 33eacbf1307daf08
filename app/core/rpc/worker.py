"""One RPC worker's address, and how the text a user typed becomes one ("192.0.2.7:50052", "[::1]:50052")."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.problem import UserError
from app.core.text import T

DEFAULT_WORKER_PORT = 50052  # rpc-server's default port (tools/rpc/rpc-server.cpp)
MAX_WORKERS = 16  # GGML_RPC_MAX_SERVERS


@dataclass(frozen=True, order=True)
class Worker:
    host: str
    port: int = DEFAULT_WORKER_PORT

    @property
    def address(self) -> str:
        """As llama-server's ``--rpc`` takes it: host:port (llama.cpp splits at the first ':', so no IPv6)."""
        return f"{self.host}:{self.port}"

    def __str__(self) -> str:
        return self.address


def parse_worker(text: str) -> Worker:
    """``host:port`` or just ``host`` (port 50052). Raises UserError with a plain sentence."""
    raw = text.strip()
    host, sep, port_text = raw.rpartition(":") if ":" in raw else (raw, "", "")
    if not sep:
        host, port_text = raw, str(DEFAULT_WORKER_PORT)
    if not host or ":" in host or any(c.isspace() for c in host) or "," in host:
        raise _bad_address(raw)
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise _bad_address(raw)
    return Worker(host, int(port_text))


def parse_workers(text: str | tuple[str, ...] | list[str]) -> tuple[Worker, ...]:
    """Comma-separated addresses (or a list of them), in order, each once."""
    parts = text.split(",") if isinstance(text, str) else list(text)
    workers: list[Worker] = []
    for part in parts:
        if part.strip():
            worker = parse_worker(part)
            if worker not in workers:
                workers.append(worker)
    if len(workers) > MAX_WORKERS:
        raise UserError(T("llama.cpp can use at most {n} workers; {count} were given.",
                          "llama.cpp 最多只能使用 {n} 台工作机；给出了 {count} 台。",
                          n=MAX_WORKERS, count=len(workers)),
                        T("Remove some workers.", "请删掉一些工作机。"))
    return tuple(workers)


def _bad_address(raw: str) -> UserError:
    return UserError(T("\"{text}\" is not a worker address.", "“{text}”不是工作机地址。", text=raw),
                     T("Write it as the computer's address, a colon and the port, e.g. 192.168.1.20:50052.",
                       "请写成计算机地址、冒号和端口，例如 192.168.1.20:50052。"))


def uses_workers(config, backend) -> bool:
    """The launch puts layers on workers: it lists some and the engine takes ``--rpc`` (llama-server with RPC)."""
    return bool(getattr(config, "rpc_workers", ())) and bool(getattr(backend, "accepts", lambda _f: False)("--rpc"))
