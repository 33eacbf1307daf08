"""`gguf-launcher probe MODEL`: find safe GPU layers and context with real test loads, seeded by the plan.

Each test load starts the real server in a child process, sends one long prompt, and checks that the
safety margin is still free. Results are cached; a second run with the same settings is instant.
Exit 0 with a recommendation, 1 when nothing passes or on an error, 2 for usage errors, 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys

from app.cli._model import read_model
from app.cli._output import print_json, report_user_error
from app.cli._types import positive_seconds
from app.cli.plan import add_config_arguments, config_from_args, margins_from_args
from app.core.probe.wording import attempt_line
from app.core.problem import UserError
from app.core.text import T, Text


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("probe", help="measure safe GPU layers and context with real test loads",
                                   description=(__doc__ or "") + "\nDefault --ctx: 4096 with a GPU, else the model's "
                                   "training length (the largest context that passes is searched).")
    add_config_arguments(parser, gpu_layers_default=None)
    parser.add_argument("--no-cache", action="store_true", help="ignore a cached result and probe again")
    parser.add_argument("--load-timeout", type=positive_seconds, default=600.0, metavar="SECONDS",
                        help="give up on one test load after this long (default: 600)")
    return parser


def _progress(event) -> None:
    if event.last is not None and event.phase != "done":
        _print_attempt(event.last)
    if event.phase == "done":
        if event.last is not None:
            _print_attempt(event.last)
        return
    sys.stderr.write(f"{event.message}\n")
    sys.stderr.flush()


def _print_attempt(attempt) -> None:
    sys.stderr.write(f"  -> {attempt_line(attempt)}\n")


def run(args) -> int:
    from app.core.hardware.scan import scan_hardware
    from app.core.probe import ProbeOptions, run_probe

    try:
        info = read_model(args.model)
        hw = scan_hardware()
        config = config_from_args(args, info, hw)
        options = ProbeOptions(ram_budget=args.ram_budget, vram_budget=args.vram_budget,
                               margins=margins_from_args(args), load_timeout_s=args.load_timeout,
                               use_cache=not args.no_cache)
        result = run_probe(info, config, hw, options, progress=_progress)
    except UserError as error:
        return report_user_error(error, args.json)
    if args.json:
        print_json(result.to_dict())
    else:
        for sentence in result.plan.summary() if result.plan else []:
            print(sentence)
        print()
        for note in result.notes:
            print(note)
        print(result.summary())
        hint = _next_step(result)
        if hint is not None:
            print(T("next step: {hint}", "下一步：{hint}", hint=hint))
    return 0 if result.recommendation else 1


def _next_step(result) -> Text | None:
    """When nothing passed: the crash diagnosis' next step for the last attempt that has one."""
    if result.recommendation:
        return None
    for attempt in reversed(result.attempts):
        if attempt.diagnosis is not None and attempt.diagnosis.next_step.render():
            return attempt.diagnosis.next_step
    return None
