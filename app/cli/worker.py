"""`gguf-launcher worker [--host H] [--port P] [--mem MB] [--check HOST:PORT[,...]]`: share this computer as a
llama.cpp worker (rpc-server, supervised) until Ctrl-C, or check other workers."""

from __future__ import annotations

import argparse
import sys

from app.cli._output import json_error, print_json, print_json_line, print_next_step, report_user_error
from app.cli._types import port_number, positive_int, rpc_workers
from app.core.launch.ports import is_loopback
from app.core.problem import UserError
from app.core.rpc.worker import DEFAULT_WORKER_PORT
from app.core.server.shared_worker import LOOPBACK, SharedWorker
from app.core.text import T


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("worker", help="share this computer's memory and processor with another "
                                                  "computer's model server (llama.cpp RPC), or check workers")
    parser.add_argument("--host", default=LOOPBACK,
                        help="address to listen on (default 127.0.0.1: only this computer can use it)")
    parser.add_argument("--port", type=port_number, default=DEFAULT_WORKER_PORT, help="port (default: 50052)")
    parser.add_argument("--mem", type=positive_int, metavar="MB",
                        help="memory to offer in MiB (only llama.cpp builds whose rpc-server has -m)")
    parser.add_argument("--threads", type=positive_int, help="processor threads for the worker")
    parser.add_argument("--server-bin", metavar="PATH", help="the llama-server whose rpc-server to use")
    parser.add_argument("--check", type=rpc_workers, metavar="HOST:PORT[,...]",
                        help="do not share: check these workers (reachable, version, memory) and exit")
    parser.add_argument("--yes", action="store_true",
                        help="with a --host other computers can reach: start without asking (for scripts)")
    parser.add_argument("--json", action="store_true", help="JSON output")
    return parser


def run(args: argparse.Namespace) -> int:
    if args.check:
        return _check(args.check, args.json)
    try:
        shared = SharedWorker(host=args.host, port=args.port, mem_mib=args.mem, threads=args.threads,
                              server_bin=args.server_bin)
    except UserError as error:
        return _fail(error, args.json)
    _say(shared.warning, args.json, "warning")
    if not is_loopback(args.host):
        refusal = _confirm(args, shared.worker.address)
        if refusal is not None:
            return _fail(refusal, args.json)
    try:
        shared.start()
        check = shared.wait_ready()
    except UserError as error:
        return _fail(error, args.json)
    except KeyboardInterrupt:
        shared.stop()
        return 0
    for note in shared.notes:
        _say(note, args.json, "note")
    _say(T("Sharing this computer as a worker at {address} ({free} of memory offered). Other computers add "
           "this address to their workers. Press Ctrl-C to stop.",
           "正在把这台电脑共享为工作机，地址 {address}（提供 {free} 内存）。其他电脑把这个地址加入它们的工作机列表。"
           "按 Ctrl-C 停止。", address=check.worker.address, free=_mib(check.free_bytes)), args.json, "ready",
         address=check.worker.address, pid=shared.child.pid if shared.child else None, check=check.to_dict())
    try:
        while not shared.wait(0.5):
            pass
    except KeyboardInterrupt:
        shared.stop()
        _say(T("The worker stopped.", "工作机已停止。"), args.json, "stopped")
        return 0
    diagnosis = shared.diagnosis
    if diagnosis is not None:
        if args.json:
            print_json_line({"event": "crashed", "diagnosis": diagnosis.to_dict()})
        else:
            print(diagnosis.message, flush=True)
            print_next_step(diagnosis)
    shared.stop()
    return 1


def _confirm(args: argparse.Namespace, where: str) -> UserError | None:
    """An address other computers can reach is shared only when the user says so: --yes, or y at the terminal's
    question. None when confirmed; the sentence to end with otherwise."""
    if args.yes:
        return None
    if not sys.stdin.isatty():
        return UserError(T("The worker was not started: it would listen on {where}, which other computers can reach, "
                           "and there is no terminal to ask you first.",
                           "工作机没有启动：它会在 {where} 上监听，其他电脑可以访问这个地址，"
                           "而这里没有终端可以先询问您。",
                           where=where),
                         T("Run it again with --yes to share it anyway, or without --host to keep it on this "
                           "computer.", "如仍要共享，请加上 --yes 重新运行；不加 --host 则只在本机使用。"))
    sys.stderr.write(str(T("Share this computer as a worker on {where}? [y/N] ",
                           "要在 {where} 上把这台电脑共享为工作机吗？[y/N] ", where=where)))
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    if answer in ("y", "yes", "是"):
        return None
    return UserError(T("The worker was not started.", "工作机没有启动。"),
                     T("Run it again and answer y to share it, or without --host to keep it on this computer.",
                       "如要共享，请重新运行并回答 y；不加 --host 则只在本机使用。"))


def _fail(error: UserError, json_mode: bool) -> int:
    """The one ending for a failure: the sentence on stderr and, in --json mode, an error event on stdout."""
    if json_mode:
        print_json_line({"event": "error", **json_error(error)})  # the other commands' error object, as an event
    return report_user_error(error)


def _mib(n: int) -> str:
    from app.core.text import human_bytes

    return human_bytes(n)


def _say(text, json_mode: bool, event: str, **facts) -> None:
    if json_mode:
        print_json_line({"event": event, "message": text.render(), **facts})
    else:
        print(text, flush=True)


def _check(addresses: tuple[str, ...], json_mode: bool) -> int:
    from app.core.rpc.check import check_workers
    from app.core.rpc.worker import parse_workers

    checks = check_workers(parse_workers(addresses))
    if json_mode:
        print_json([c.to_dict() for c in checks])
    else:
        for c in checks:
            print(f"[{'ok  ' if c.usable else 'FAIL'}] {c.sentence()}")
    return 0 if all(c.usable for c in checks) else 1
