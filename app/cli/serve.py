"""`gguf-launcher serve MODEL ...`: run a supervised server in the terminal until Ctrl-C."""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli._engine import add_backend_argument, chosen_backend
from app.cli._model import read_model
from app.cli._output import json_error, print_json_line, print_next_step, report_user_error
from app.cli._types import context_size, gpu_layers, non_negative_int, percent, port_number, positive_int
from app.cli.plan import add_gpu_split_arguments, split_from_args
from app.core.gguf.projector import find_projector, read_projector
from app.core.launch.config import DEFAULT_HOST, DEFAULT_PORT, LaunchConfig
from app.core.launch.ports import masked_key
from app.core.problem import UserError
from app.core.process.registry import find_stale_children, kill_stale_child
from app.core.server.events import Crashed, Event, LogEvent, OffloadShort, StateChanged
from app.core.server.supervisor import State, Supervisor
from app.core.server.watchdog import WatchdogLimits
from app.core.session import first_run_ctx
from app.core.text import T
from app.core.text_safety import inert

if TYPE_CHECKING:
    from app.core.server.lan_share import LanShare
    from app.core.server.share_firewall import FirewallCheck

_print_lock = threading.Lock()


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("serve", help="run a model server, restart it if it crashes, until Ctrl-C")
    parser.add_argument("model", help="path of the .gguf model file")
    add_backend_argument(parser)
    parser.add_argument("--server-bin", metavar="PATH", help="the llama-server program to use")
    parser.add_argument("--host", default=DEFAULT_HOST, help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=port_number, default=DEFAULT_PORT,
                        help="port (a free one is used if it is taken)")
    parser.add_argument("--ctx", type=context_size,
                        help="context size in tokens (default: 4096, or the model's training length if shorter)")
    parser.add_argument("--gpu-layers", type=gpu_layers, default=0, help="layers on the GPU (-1 = all)")
    parser.add_argument("--parallel", type=positive_int, default=1, help="requests served at once (llama-server)")
    parser.add_argument("--api-key", help="require this key (default: one made for this run, printed once when the "
                                          "server is ready; web pages cannot use the server without it)")
    parser.add_argument("--no-key", action="store_true",
                        help="programs on this computer connect without a key (so can web pages open in a browser "
                             "here); a server listening beyond this computer still gets one")
    parser.add_argument("--mmproj", metavar="PATH",
                        help="vision projector GGUF (llama-server; default: an mmproj*.gguf found next to the model)")
    parser.add_argument("--no-mmproj", action="store_true", help="do not load a vision projector")
    parser.add_argument("--n-cpu-moe", type=non_negative_int, default=0, metavar="N",
                        help="mixture-of-experts models: keep the experts of the first N layers in RAM (llama-server)")
    add_gpu_split_arguments(parser)
    parser.add_argument("--no-restart", action="store_true", help="do not restart after a crash")
    parser.add_argument("--no-watchdog", action="store_true",
                        help="no memory watchdog (by default: a warning at 85%% of memory in use, a planned restart "
                             "at 92%%, before the system's out-of-memory killer would act)")
    parser.add_argument("--memory-warn", type=percent, default=85, metavar="PERCENT",
                        help="memory in use at which the watchdog warns and trims (default: %(default)s)")
    parser.add_argument("--memory-restart", type=percent, default=92, metavar="PERCENT",
                        help="memory in use at which the watchdog restarts the server (default: %(default)s)")
    parser.add_argument("--kill-stale", action="store_true",
                        help="first stop servers left running by an earlier app session that crashed")
    parser.add_argument("--share", type=share_address, metavar="HOST[:PORT]",
                        help="share the server with other devices through a proxy on HOST (0.0.0.0: every network) "
                             "that wants a generated key and turns away what the slots cannot take (HTTP 429); "
                             "the server itself stays on 127.0.0.1 (port default 8090, 0 = any free one; an IPv6 "
                             "address in brackets: [::1]:8090)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line per event")
    parser.add_argument("--logs", action="store_true", help="also print the server's own output lines")
    return parser


def config_from_args(args: argparse.Namespace) -> LaunchConfig:
    model = Path(args.model).expanduser()
    info = read_model(str(model))  # a missing, empty, non-GGUF or truncated file is refused before any server starts
    return LaunchConfig(model=str(model.absolute()), backend=chosen_backend(args), server_bin=args.server_bin,
                        ctx=args.ctx or first_run_ctx(info), gpu_layers=args.gpu_layers, parallel=args.parallel,
                        host=args.host, port=args.port, api_key=args.api_key, local_key=not args.no_key,
                        mmproj=_projector(args, model),
                        n_cpu_moe=args.n_cpu_moe, **split_from_args(args))


def _projector(args: argparse.Namespace, model: Path) -> str | None:
    """The vision projector to load: --mmproj (checked), else one found next to the model, unless --no-mmproj."""
    if args.no_mmproj:
        return None
    if args.mmproj is None:
        found = find_projector(model)
        return str(found.absolute()) if found is not None else None
    path = Path(args.mmproj).expanduser()
    if read_projector(path) is None:
        raise UserError(T("{name} is not a vision projector file that can be read.",
                          "{name} 不是可读取的视觉投影文件。", name=path.name),
                        T("Choose the mmproj .gguf file that came with the model, or leave it out.",
                          "请选择与模型一起提供的 mmproj .gguf 文件，或不使用它。"))
    return str(path.absolute())


def _watchdog_levels_error(args: argparse.Namespace) -> UserError | None:
    if args.memory_restart > args.memory_warn:
        return None
    return UserError(T("The restart level ({restart} %) must be above the warning level ({warn} %).",
                       "重启阈值（{restart}%）必须高于警告阈值（{warn}%）。",
                       restart=args.memory_restart, warn=args.memory_warn),
                     T("For example: --memory-warn 85 --memory-restart 92.",
                       "例如：--memory-warn 85 --memory-restart 92。"))


def run(args: argparse.Namespace) -> int:
    levels_error = _watchdog_levels_error(args)
    if levels_error is not None:
        return _refuse(levels_error, args.json)
    try:
        config = config_from_args(args)
    except UserError as error:
        return _refuse(error, args.json)
    _handle_stale_children(args.kill_stale, args.json)
    limits = WatchdogLimits(warn_fraction=args.memory_warn / 100, critical_fraction=args.memory_restart / 100)
    supervisor = Supervisor(config, auto_restart=not args.no_restart,
                            memory_watchdog=None if args.no_watchdog else limits)
    supervisor.subscribe(lambda event: _show(event, json_mode=args.json, logs=args.logs))
    supervisor.subscribe(_key_teller(supervisor, args.json, own_key=bool(args.api_key)))
    try:  # SIGINT and SIGTERM arrive as KeyboardInterrupt (the dispatcher installs the handlers)
        supervisor.start()
        if args.share is not None:
            _start_share(supervisor, args.share, args.json)
        final = supervisor.wait_for(State.FAILED)
        while final is not State.FAILED:  # wait in short slices so Ctrl-C is handled promptly on every OS
            final = supervisor.wait_for(State.FAILED, timeout=0.5)
        _show_failure_hint(supervisor, args.json)
        return 1
    except UserError as error:
        return 1 if args.json else report_user_error(error)
    except KeyboardInterrupt:
        supervisor.stop()
        return 0
    finally:
        supervisor.close()


def _refuse(error: UserError, json_mode: bool) -> int:
    """A server that cannot start: the sentence on stderr and, in --json mode, the error event on stdout."""
    if json_mode:
        print_json_line({"event": "error", **json_error(error)})
    return report_user_error(error)


def share_address(text: str) -> tuple[str, int]:
    """``HOST``, ``HOST:PORT``, ``[IPv6]`` or ``[IPv6]:PORT`` for --share (the port 0 to 65535)."""
    from app.core.server.lan_share import parse_share_address

    try:
        return parse_share_address(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _start_share(supervisor: Supervisor, address: tuple[str, int], json_mode: bool) -> None:
    """The LAN share in front of the server; its key is printed this once (the user gives it to the other devices)."""
    from app.core.server.lan_share import LanShare, ShareSettings

    share = LanShare(supervisor, ShareSettings(host=address[0], port=address[1]))
    _say_before_share(address[0], json_mode)
    try:
        share.start()
    except UserError as error:  # in JSON the one error event; run() prints it otherwise
        if json_mode:
            with _print_lock:
                print_json_line({"event": "error", **json_error(error)})  # the other commands' error object
        raise
    with _print_lock:
        if json_mode:
            print_json_line({"event": "share", "urls": share.urls, "api_key": share.settings.api_key,
                             "max_active": share.proxy.limit.max_active, "message": share.summary().render()})
        else:
            print(share.summary(), flush=True)
            print(T("Key for the other devices (shown only now): {key}", "给其他设备的密钥（只在此时显示）：{key}",
                    key=share.settings.api_key), flush=True)
    _watch_firewall(share, json_mode)


def _say_before_share(host: str, json_mode: bool) -> None:
    """On Windows, before a share beyond this computer first listens: what Windows may ask and what to answer."""
    from app.core.server.share_firewall import ask_ahead

    ahead = ask_ahead(host)
    if ahead is not None and not json_mode:
        with _print_lock:
            print(ahead, flush=True)


def _watch_firewall(share: LanShare, json_mode: bool) -> threading.Thread | None:
    """On Windows, the firewall's verdict on the share, told when it has a sentence (Windows is asking; a Block rule
    keeps other devices out, with the fix), read again while the question is open. Off the main thread: netsh takes
    a second or two and the server's events go on meanwhile."""
    from app.core.server.share_firewall import applies, watch_share_firewall

    if not applies(share.settings.host):
        return None
    port = share.proxy.bound_port or share.settings.port
    watcher = threading.Thread(target=watch_share_firewall, name="share-firewall", daemon=True,
                               args=(share.settings.host, port, firewall_teller(json_mode)),
                               kwargs={"stop": lambda: not share.running})
    watcher.start()
    return watcher


def firewall_teller(json_mode: bool) -> Callable[[FirewallCheck], None]:
    """How the CLI tells a firewall verdict: a ``firewall`` JSON event, or the sentence and its next step."""

    def tell(check: FirewallCheck) -> None:
        with _print_lock:
            if json_mode:
                print_json_line({"event": "firewall", **check.to_dict()})
                return
            if check.message is not None:
                print(check.message, flush=True)
            if check.next_step is not None:
                print(T("  next step: ", "  下一步：").render() + check.next_step.render(), flush=True)

    return tell


def _key_teller(supervisor: Supervisor, json_mode: bool, *, own_key: bool):
    """Once the server is first ready: how other programs on this computer connect. The key is printed in full once
    (a JSON ``key`` event, or a line of its own on a terminal); written to a file or a pipe it is masked, with the
    two ways to connect without reading it (your own --api-key, or --no-key)."""
    told = threading.Event()

    def tell(event: Event) -> None:
        if not isinstance(event.payload, StateChanged) or event.payload.state is not State.READY or told.is_set():
            return
        told.set()
        key, url = supervisor.api_key, supervisor.url
        with _print_lock:
            if json_mode:
                print_json_line({"event": "key", "url": f"{url}/v1", "api_key": key})
            elif key is None:
                print(T("Programs on this computer connect to {url}/v1 without a key.",
                        "本机上的程序无需密钥即可连接 {url}/v1。", url=url), flush=True)
            elif own_key:
                print(T("Programs on this computer connect to {url}/v1 with the API key you gave.",
                        "本机上的程序使用你提供的 API 密钥连接 {url}/v1。", url=url), flush=True)
            elif sys.stdout.isatty():
                print(T("Programs on this computer connect to {url}/v1 with this API key (shown only now):",
                        "本机上的程序使用此 API 密钥连接 {url}/v1（只在此时显示）：", url=url), flush=True)
                print(key, flush=True)
            else:
                print(T("Programs on this computer connect to {url}/v1 with the API key {masked} made for this run; "
                        "to connect one, start with --api-key YOUR-KEY (or --no-key).",
                        "本机上的程序使用为本次运行生成的 API 密钥 {masked} 连接 {url}/v1；要连接其他程序，"
                        "请用 --api-key 你的密钥 启动（或用 --no-key）。", url=url, masked=masked_key(key)), flush=True)

    return tell


def _handle_stale_children(kill: bool, json_mode: bool) -> None:
    """Servers an earlier, crashed session left behind hold memory and ports: stop them or say how."""
    for child in find_stale_children():
        killed = kill and kill_stale_child(child)
        if json_mode:
            print_json_line({"event": "stale_child", "pid": child.pid, "cmdline": list(child.cmdline),
                             "killed": killed})
        elif killed:
            print(T("Stopped a server left running by an earlier session (pid {pid}).",
                    "已停止上次会话遗留的服务器（进程 {pid}）。", pid=child.pid), flush=True)
        else:
            print(T("note: a server from an earlier session is still running (pid {pid}); "
                    "add --kill-stale to stop it.",
                    "提示：上次会话的服务器仍在运行（进程 {pid}）；加上 --kill-stale 可停止它。", pid=child.pid),
                  flush=True)


def _show(event: Event, *, json_mode: bool, logs: bool) -> None:
    if isinstance(event.payload, LogEvent) and not logs:
        return
    with _print_lock:
        if json_mode:
            print_json_line(_json_event(event))
        else:
            _print_human(event)


def _json_event(event: Event) -> dict:
    payload = event.payload
    if isinstance(payload, LogEvent):
        return {"event": event.kind.value, "time": round(event.time, 3), "stream": payload.line.stream,
                "line": payload.line.text}
    return event.to_dict()


def _print_human(event: Event) -> None:
    payload = event.payload
    if isinstance(payload, LogEvent):
        print(f"  | {inert(payload.line.text)}", flush=True)
        return
    if isinstance(payload, StateChanged):
        _print_state(payload)
        return
    sentence = payload.sentence()
    if sentence is not None:
        print(sentence, flush=True)
    if isinstance(payload, (Crashed, OffloadShort)):  # offload: the server runs, but fewer layers went to the GPU
        _print_diagnosis(payload.diagnosis)


def _print_state(change: StateChanged) -> None:
    if change.state in (State.CRASHED, State.RESTARTING):
        return  # the crash / restart events say it with more detail
    for note in change.notes:
        print(f"note: {note}", flush=True)
    start_failed = change.diagnosis is not None and change.diagnosis.cause == "start_failed"
    if not start_failed:
        print(change.sentence(), flush=True)
    if change.state is State.STARTING:
        print(T("  command: {cmd}", "  命令：{cmd}", cmd=change.command_line or ""), flush=True)


def _print_diagnosis(diagnosis) -> None:
    print_next_step(diagnosis)
    meaning = diagnosis.exit_meaning.render()
    if meaning:
        print(T("  exit: {meaning}", "  退出：{meaning}", meaning=meaning), flush=True)
    for line in diagnosis.evidence[-8:]:
        print(f"  | {inert(line)}", flush=True)


def _show_failure_hint(supervisor: Supervisor, json_mode: bool) -> None:
    if json_mode:
        return
    diagnosis = supervisor.last_diagnosis
    if diagnosis is not None and diagnosis.cause == "start_failed":
        _print_diagnosis(diagnosis)
    sys.stdout.write(str(T("Full log: {path}", "完整日志：{path}", path=str(supervisor.log.path))) + "\n")
