"""One worker checked: does it answer, does it speak this engine's protocol, how much memory does it report.

The result is a value (``WorkerCheck``) with one plain sentence; the plan reads the memory from the last check
of each worker (``reported_memory``, kept ``CHECK_TTL_S`` seconds), so planning never waits on the network twice.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from app.core.rpc.protocol import PROTOCOL_VERSION, DeviceMemory, RpcError, ask, compatible
from app.core.rpc.worker import Worker
from app.core.text import T, Text, human_bytes

logger = logging.getLogger(__name__)

READY, BUSY, REFUSED, UNREACHABLE, OLD_VERSION, BAD_ANSWER = (
    "ready", "busy", "refused", "unreachable", "version", "bad_answer")
CHECK_TTL_S = 30.0


@dataclass(frozen=True)
class WorkerCheck:
    worker: Worker
    state: str  # READY | BUSY | REFUSED | UNREACHABLE | OLD_VERSION | BAD_ANSWER
    version: tuple[int, int, int] | None = None
    devices: tuple[DeviceMemory, ...] = ()
    detail: str = ""  # the socket's own words, for the log and the evidence lines only
    checked_at: float = 0.0

    @property
    def usable(self) -> bool:
        return self.state == READY

    @property
    def free_bytes(self) -> int:
        return sum(d.free_bytes for d in self.devices)

    @property
    def total_bytes(self) -> int:
        return sum(d.total_bytes for d in self.devices)

    @property
    def version_text(self) -> str:
        return ".".join(map(str, self.version)) if self.version else "?"

    def sentence(self) -> Text:
        params = dict(address=self.worker.address, version=self.version_text,
                      ours=".".join(map(str, PROTOCOL_VERSION)), free=human_bytes(self.free_bytes))
        return _SENTENCES[self.state](params)

    def to_dict(self, lang: str | None = None) -> dict:
        return {"address": self.worker.address, "state": self.state, "usable": self.usable,
                "version": self.version_text if self.version else None, "free_bytes": self.free_bytes,
                "total_bytes": self.total_bytes, "devices": len(self.devices), "detail": self.detail,
                "sentence": self.sentence().render(lang)}


_SENTENCES = {
    READY: lambda p: T("The worker at {address} is ready: {free} of memory to lend (protocol {version}).",
                       "{address} 上的工作机已就绪：可提供 {free} 内存（协议 {version}）。", **p),
    BUSY: lambda p: T("The worker at {address} answers, but it is serving another model right now; it takes "
                      "one computer at a time.",
                      "{address} 上的工作机有响应，但正在为另一个模型服务；它一次只接受一台电脑。", **p),
    REFUSED: lambda p: T("Nothing is listening at {address}: the worker is not running there, or it uses another "
                         "port.", "{address} 上没有程序在监听：那里没有运行工作机，或者它使用了其他端口。", **p),
    UNREACHABLE: lambda p: T("The computer at {address} cannot be reached from here (wrong address, switched off, "
                             "or a firewall in between).",
                             "从这里无法连接到 {address} 上的电脑（地址不对、电脑已关机，或中间有防火墙）。", **p),
    OLD_VERSION: lambda p: T("The worker at {address} runs another llama.cpp version (protocol {version}, this "
                             "app's engine speaks {ours}); update llama.cpp on that computer to the same version.",
                             "{address} 上的工作机运行的是另一个 llama.cpp 版本（协议 {version}，本程序的引擎使用 "
                             "{ours}）；请把那台电脑上的 llama.cpp 更新到相同版本。", **p),
    BAD_ANSWER: lambda p: T("The program at {address} does not answer like a llama.cpp worker.",
                            "{address} 上的程序的回应不像 llama.cpp 工作机。", **p),
}


def check_worker(worker: Worker, *, timeout_s: float = 2.0) -> WorkerCheck:
    now = time.time()
    try:
        answer = ask(worker, timeout_s=timeout_s)
    except RpcError as error:
        # a worker that hangs up on our HELLO speaks another protocol version (see protocol.py)
        state = OLD_VERSION if error.kind == "closed" else error.kind
        logger.info("worker %s: %s", worker.address, error)
        result = WorkerCheck(worker, state, detail=error.detail, checked_at=now)
    else:
        state = READY if compatible(answer.version) and answer.devices else (
            OLD_VERSION if not compatible(answer.version) else BAD_ANSWER)
        result = WorkerCheck(worker, state, answer.version, answer.devices, checked_at=now)
    remember(result)
    return result


def check_workers(workers: tuple[Worker, ...] | list[Worker], *, timeout_s: float = 2.0) -> tuple[WorkerCheck, ...]:
    """All at once (each waits at most ``timeout_s``), in the given order."""
    if not workers:
        return ()
    with ThreadPoolExecutor(max_workers=min(len(workers), 8), thread_name_prefix="worker-check") as pool:
        return tuple(pool.map(lambda w: check_worker(w, timeout_s=timeout_s), workers))


_lock = threading.Lock()
_last: dict[Worker, WorkerCheck] = {}


def remember(result: WorkerCheck) -> None:
    """Keep ``result`` as the last check of its worker (what the plan reads)."""
    with _lock:
        known = _last.get(result.worker)
        if result.state == BUSY and known is not None and known.usable:
            # busy: a model server is using it, which says nothing new about its memory; keep the numbers
            _last[result.worker] = replace(known, checked_at=result.checked_at)
        else:
            _last[result.worker] = result


def last_check(worker: Worker, *, max_age_s: float = CHECK_TTL_S, timeout_s: float = 2.0) -> WorkerCheck:
    """The last check of ``worker`` when recent, else a new one. A worker found busy keeps the numbers of its
    last good check: the plan of a model that already uses it reads them."""
    with _lock:
        known = _last.get(worker)
    if known is not None and time.time() - known.checked_at <= max_age_s:
        return known
    check_worker(worker, timeout_s=timeout_s)
    with _lock:
        return _last[worker]


def last_checks(workers: tuple[Worker, ...] | list[Worker], *, max_age_s: float = CHECK_TTL_S,
                timeout_s: float = 2.0) -> tuple[WorkerCheck, ...]:
    """``last_check`` of each worker; the stale ones are checked again all at once."""
    now = time.time()
    with _lock:
        stale = [w for w in workers if w not in _last or now - _last[w].checked_at > max_age_s]
    check_workers(stale, timeout_s=timeout_s)
    with _lock:
        return tuple(_last[w] for w in workers)
