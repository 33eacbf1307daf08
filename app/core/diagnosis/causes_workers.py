"""Sentences for llama.cpp RPC workers: one stopped answering, cannot be reached, speaks another version, or is full.

llama.cpp's RPC client aborts the whole server when a worker's answer does not come (ggml-rpc.cpp
``RPC_STATUS_ASSERT``: "Remote RPC server crashed or returned malformed response", then SIGABRT), and that line
does not name the worker: the workers of the launch are asked once more here, and the ones that do not answer
are named. The fixes: wait for it and restart as it was (the Restart button), or restart without it (the fix). A
worker that is gone is not restarted on its own (the same start would fail to connect); a hiccup after which every
worker answers again is.
"""

from __future__ import annotations

import logging

from app.core.diagnosis.situation import Situation
from app.core.rpc.check import BUSY, READY, check_workers
from app.core.rpc.worker import parse_worker
from app.core.text import T, Text

logger = logging.getLogger(__name__)
Parts = tuple[Text, Text, dict, bool]
RECHECK_TIMEOUT_S = 1.0


def _workers(s: Situation) -> list[str]:
    return [str(a) for a in (getattr(s.config, "rpc_workers", None) or ())]


def _silent_workers(s: Situation) -> list[str]:
    """The launch's workers that do not answer now (a busy one answers: it serves someone else)."""
    addresses = _workers(s)
    try:
        checks = check_workers([parse_worker(a) for a in addresses], timeout_s=RECHECK_TIMEOUT_S)
    except Exception:  # a bad stored address must not hide the diagnosis itself
        logger.warning("re-checking the workers failed", exc_info=True)
        return []
    return [c.worker.address for c in checks if c.state not in (READY, BUSY)]


def _without(s: Situation, gone: list[str]) -> dict:
    return {"rpc_workers": [a for a in _workers(s) if a not in gone]}


def _named(addresses: list[str]) -> str:
    return ", ".join(addresses)


def worker_lost(s: Situation) -> Parts:
    gone = _silent_workers(s)
    if gone:
        message = T("The worker at {address} stopped answering, so the model server stopped too.",
                    "{address} 上的工作机不再响应，所以模型服务器也停止了。", address=_named(gone))
        hint = T("Wait until that computer's worker runs again and restart, or restart without it (the model "
                 "then runs on this computer, more slowly or with fewer layers if it does not fit).",
                 "等那台电脑上的工作机重新运行后再重新启动，或者不用它重新启动（模型将在本机运行，"
                 "可能更慢；放不下时层数会更少）。")
        # not restarted on its own: the same start would only fail to connect; the user waits or goes without it
        return message, hint, _without(s, gone), False
    everyone = _workers(s)
    if not everyone:
        return (T("A worker (another computer lending its memory) stopped answering, so the model server stopped.",
                  "一台工作机（借出内存的其他电脑）不再响应，所以模型服务器停止了。"),
                T("Restart when the worker runs again, or restart without workers.",
                  "等工作机重新运行后再重新启动，或者不用工作机重新启动。"), {}, True)
    message = T("A worker ({address}) stopped answering for a moment, so the model server stopped; all of them "
                "answer again now.",
                "有一台工作机（{address}）短暂没有响应，所以模型服务器停止了；现在它们都又有响应了。",
                address=_named(everyone) or "?")
    hint = T("Restart. If it happens again, check the network between the computers, or restart without the "
             "workers.", "请重新启动。如果再次发生，请检查电脑之间的网络，或者不用工作机重新启动。")
    return message, hint, {}, True


def worker_unreachable(s: Situation) -> Parts:
    address = s.group("address") or _named(_workers(s)) or "?"
    return (T("The model server could not connect to the worker at {address}.",
              "模型服务器无法连接到 {address} 上的工作机。", address=address),
            T("Start the worker on that computer (in GGUF Launcher: Share this computer as a worker) and restart, "
              "or restart without it.",
              "请在那台电脑上启动工作机（在 GGUF Launcher 中：将这台电脑共享为工作机）后重新启动，"
              "或者不用它重新启动。"),
            _without(s, [address]), False)


def worker_version(s: Situation) -> Parts:
    address = s.group("address")
    gone = [address] if address else _silent_workers(s) or _workers(s)
    return (T("The worker at {address} runs another llama.cpp version than this computer, so they cannot work "
              "together.", "{address} 上的工作机运行的 llama.cpp 版本与本机不同，无法一起工作。",
              address=_named(gone) or "?"),
            T("Install the same llama.cpp version on both computers, or restart without that worker.",
              "请在两台电脑上安装相同版本的 llama.cpp，或者不用那台工作机重新启动。"),
            _without(s, gone), False)


def worker_out_of_memory(s: Situation) -> Parts:
    address = s.group("address") or "?"
    return (T("The worker at {address} has no room for its share of the model.",
              "{address} 上的工作机放不下分给它的那部分模型。", address=address),
            T("Give that worker fewer layers (a smaller share in the split), or restart without it.",
              "请给那台工作机分配更少的层（减小它在拆分中的份额），或者不用它重新启动。"),
            _without(s, [address]), False)


BUILDERS = {"worker_lost": worker_lost, "worker_unreachable": worker_unreachable, "worker_version": worker_version,
            "worker_out_of_memory": worker_out_of_memory}
