"""`gguf-launcher selftest [MODEL | --url URL]`: several growing chat rounds and one long answer.

Starts the model under the supervisor (or uses a running server with --url) and reports per round: messages
sent, prompt tokens, trimmed messages, time to first token, tokens/s, finish reason, server memory and any
error with its classification. Exit 0 only when every round was answered, 1 otherwise, 2 for usage errors.
"""

from __future__ import annotations

import argparse
import sys

from app.cli._engine import chosen_backend
from app.cli._model import read_model
from app.cli._output import print_json, report_user_error
from app.cli._types import context_size, gpu_layers, http_url, positive_int
from app.core.chat.client import ChatClient
from app.core.chat.errors import ChatError
from app.core.chat.hooks import client_for_supervisor, ctx_per_slot
from app.core.chat.selftest import RoundReport, SelftestReport, run_selftest
from app.core.launch.config import BACKEND_EMBEDDED, BACKEND_LLAMA_SERVER, LaunchConfig
from app.core.problem import UserError
from app.core.text import T, human_bytes
from app.core.text_safety import inert


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("selftest", help="chat several growing rounds with a model and check each",
                                   description=__doc__)
    parser.add_argument("model", nargs="?", help="path of a .gguf file to start (or use --url)")
    parser.add_argument("--url", type=http_url, help="use a server that is already running, e.g. http://127.0.0.1:8080")
    parser.add_argument("--backend", choices=[BACKEND_EMBEDDED, BACKEND_LLAMA_SERVER], default=None,
                        help="engine to start (default: llama-server, or embedded when llama-server cannot run "
                             "here) or that answers at --url (default: detect)")
    parser.add_argument("--server-bin", metavar="PATH", help="llama-server binary (with --backend llama-server)")
    parser.add_argument("--ctx", type=context_size, default=None,
                        help="context size in tokens (default 4096 when starting)")
    parser.add_argument("--gpu-layers", type=gpu_layers, default=0, help="layers on the GPU when starting (default 0)")
    parser.add_argument("--rounds", type=positive_int, default=5, help="number of growing rounds (default 5)")
    parser.add_argument("--api-key", help="API key of the server")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    return parser


def run(args) -> int:
    if bool(args.model) == bool(args.url):
        sys.stderr.write("error: give either a MODEL file or --url (not both)\n"
                         "next step: gguf-launcher selftest model.gguf, or gguf-launcher selftest --url http://127.0.0.1:8080\n")
        return 2
    progress = None if args.json else _print_round
    try:
        if args.model:
            read_model(args.model)  # a file that cannot load is refused before a server is started for it
        report = _with_url(args, progress) if args.url else _with_model(args, progress)
    except UserError as error:
        return report_user_error(error, args.json)
    except ChatError as error:  # e.g. the server died before the first round could be prepared
        return report_user_error(_user_error(error), args.json)
    _print_report(report, args.json)
    return 0 if report.passed else 1


def _with_url(args, progress) -> SelftestReport:
    """A server someone else started: ask it who it is and its real context first (``app.core.remote``)."""
    from app.core.chat.selftest import LOADING_WAIT_S
    from app.core.remote import client_for_remote, connect

    remote = connect(args.url, args.api_key, wait_loading_s=LOADING_WAIT_S)  # a model still loading is waited for
    if not args.json:
        print(remote.summary())
    client = client_for_remote(remote)
    if args.backend:
        client.backend = args.backend
    if args.ctx:
        client.ctx_per_slot = args.ctx
    try:
        _check_reachable(client)
        report = run_selftest(client, rounds=args.rounds, progress=progress)
    finally:
        client.close()
    report.remote = remote.to_dict()
    return report


def _with_model(args, progress) -> SelftestReport:
    from app.core.launch.ports import find_free_port
    from app.core.server.supervisor import State, Supervisor

    config = LaunchConfig(model=args.model, backend=chosen_backend(args), server_bin=args.server_bin,
                          ctx=args.ctx or 4096, gpu_layers=args.gpu_layers, api_key=args.api_key,
                          port=find_free_port())
    supervisor = Supervisor(config, auto_restart=False)
    if not args.json:
        print(T("Starting {model} ({backend}, context {ctx})…", "正在启动 {model}（{backend}，上下文 {ctx}）…",
                model=args.model, backend=config.backend, ctx=config.ctx))
    supervisor.start()
    try:
        state = supervisor.wait_for({State.READY, State.FAILED, State.CRASHED, State.STOPPED}, timeout=600)
        if state is not State.READY:
            diagnosis = supervisor.last_diagnosis
            message = diagnosis.message if diagnosis else T("The server did not become ready.", "服务器未能就绪。")
            next_step = diagnosis.next_step if diagnosis else None
            raise UserError(message, next_step, tuple(line.text for line in supervisor.tail(20)))
        client = client_for_supervisor(supervisor)
        client.ctx_per_slot = ctx_per_slot(supervisor.config)
        try:
            return run_selftest(client, rounds=args.rounds, server_pid=supervisor.pid, progress=progress)
        finally:
            client.close()
    finally:
        supervisor.close()


def _check_reachable(client: ChatClient) -> None:
    from app.core.chat.classify import ServerLoading

    try:
        client.server_info()
    except ServerLoading:
        return  # run_selftest waits for the model to load
    except ChatError as error:
        raise _user_error(error) from None


def _user_error(error: ChatError) -> UserError:
    """A classified chat failure in the CLI's problem shape. For a crash the message and next step are the crash
    diagnosis' own (ChatError took them over) and the evidence is the log lines the diagnosis picked."""
    evidence = getattr(error.diagnosis, "evidence", None) or error.evidence
    return UserError(error.message, error.next_step, tuple(evidence))


def _print_round(result: RoundReport) -> None:
    label = T("long answer", "长回答") if result.kind == "long" else T("round {n}", "第 {n} 轮", n=result.round)
    if result.ok:
        ttft = f"{result.ttft_s * 1000:.0f} ms" if result.ttft_s is not None else "-"
        speed = f"{result.tokens_per_s:.1f} tok/s" if result.tokens_per_s else "-"
        print(f"[ok  ] {label}: " + str(T(
            "sent {sent} of {history} messages, prompt {prompt} tokens (whole history {naive}), {trimmed} dropped; "
            "first token {ttft}, {speed}, {completion} tokens, finish {finish}; server memory {rss}",
            "发送 {sent}/{history} 条消息，提示 {prompt} 个 token（完整历史 {naive}），丢弃 {trimmed} 条；"
            "首 token {ttft}，{speed}，{completion} 个 token，结束原因 {finish}；服务器内存 {rss}",
            sent=result.messages_sent, history=result.messages_in_history, prompt=result.prompt_tokens,
            naive=result.naive_prompt_tokens, trimmed=result.trimmed_messages, ttft=ttft, speed=speed,
            completion=result.completion_tokens, finish=result.finish_reason,
            rss=human_bytes(result.server_rss_bytes))))
    else:
        error = result.error or {}
        print(inert(f"[FAIL] {label}: [{error.get('kind')}] {error.get('message')}"))
        if error.get("next_step"):
            print(inert(f"       -> {error['next_step']}"))


def _print_report(report: SelftestReport, as_json: bool) -> None:
    if as_json:
        print_json(report.to_dict())
        return
    if report.skipped_rounds:
        print(T("The server is gone, so the other {n} round(s) were not run.",
                "服务器已不在运行，其余 {n} 轮没有进行。", n=report.skipped_rounds))
    if report.naive_overflowed:
        print(T("The full history outgrew the context ({ctx} tokens); older turns were trimmed as designed.",
                "完整历史超出了上下文（{ctx} 个 token）；较早的轮次已按设计裁剪。", ctx=report.ctx_per_slot))
    if report.passed:
        print(T("Self-test passed: every round was answered.", "自检通过：每一轮都得到了回答。"))
    else:
        failed = sum(1 for r in report.rounds if not r.ok)
        print(T("Self-test failed: {n} round(s) were not answered.", "自检失败：{n} 轮没有得到回答。", n=failed))
