"""Command line: `gguf-launcher [COMMAND ...]`. No command opens the desktop app.

Each module in this package that defines ``add_parser(subparsers)`` and ``run(args) -> int``
is a command; the dispatcher discovers them, so adding a command touches only its own file.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import signal
import sys
import threading
from collections.abc import Callable
from types import ModuleType

from app import __version__
from app.core.app_log import configure_app_log, install_crash_hook


def _command_modules() -> list[ModuleType]:
    modules = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "add_parser") and hasattr(module, "run"):
            modules.append(module)
    return modules


class _Parser(argparse.ArgumentParser):
    """Usage errors as one sentence and the next step, not the whole usage block (exit 2 as before); with --json
    anywhere on the command line, stdout also gets them as the one JSON error object every command prints."""

    json_errors = False  # set by main() for the command line being parsed (subcommand parsers share it)

    def error(self, message: str):
        from app.core.text import T

        next_step = T("see `{prog} --help` for the options.", "运行 `{prog} --help` 查看可用选项。", prog=self.prog)
        if _Parser.json_errors:
            from app.cli._output import print_json

            print_json({"error": {"message": message, "fix": str(next_step), "evidence": [], "fix_action": None}})
        self.exit(2, f"{self.prog}: {T('error', '错误')}: {message}\n{T('next step', '下一步')}: {next_step}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gguf-launcher",
        description="Run a local GGUF model with llama.cpp safely. With no command, opens the desktop app.",
    )
    parser.add_argument("--version", action="version", version=f"gguf-launcher {__version__}")
    parser.add_argument("--lang", choices=["en", "zh"], help="language of messages (default: system)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _command_modules():
        sub = module.add_parser(subparsers)
        sub.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None, open_window: Callable[[], int] | None = None) -> int:
    """Run one command. With none, ``open_window`` opens the desktop app (``app.__main__`` passes it, so this
    package never imports the UI); without it, the usage is printed."""
    argv = sys.argv[1:] if argv is None else argv
    _set_language_early(argv)
    parser = build_parser()
    _Parser.json_errors = "--json" in argv
    args = parser.parse_args(argv)
    if args.command is None:
        if open_window is None:
            parser.print_help()
            return 0
        return open_window()
    configure_app_log("cli")
    install_crash_hook("cli")  # an error nothing caught: its traceback to the app log, one sentence to stderr
    previous = _interrupt_on_stop_signals()
    try:
        return int(args._run(args) or 0)
    except KeyboardInterrupt:
        return 130
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        from app.core.process.registry import stop_own_children

        stop_own_children()  # an interrupt between a spawn and its bookkeeping must not leave a server behind


def _set_language_early(argv: list[str]) -> None:
    """--lang must apply before parsing, so that usage errors are already in the chosen language."""
    from app.core.text import SUPPORTED_LANGUAGES, set_language

    for i, arg in enumerate(argv):
        if arg.startswith("--lang="):
            value = arg.split("=", 1)[1]
        else:
            value = argv[i + 1] if arg == "--lang" and i + 1 < len(argv) else None
        if value in SUPPORTED_LANGUAGES:
            set_language(value)


def _raise_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _interrupt_on_stop_signals() -> dict:
    """SIGTERM (and SIGINT, which a shell ignores in background jobs) unwind like Ctrl-C, so every command
    stops the server it started and removes its pid file instead of dying on the spot."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, _raise_interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
