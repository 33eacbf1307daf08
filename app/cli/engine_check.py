"""`gguf-launcher engine-check`: prove the engines' CPU kernels run here on quantized models.

Exit 0 when every engine checked runs all test models, 1 when one does not (with the cause and the next step).
"""

from __future__ import annotations

import argparse
import sys

from app.cli._output import print_check, print_json, report_user_error
from app.core.launch.config import BACKEND_EMBEDDED, BACKEND_LLAMA_SERVER
from app.core.problem import Status, UserError
from app.core.text_safety import inert


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("engine-check", help="test that the engines run quantized models on this processor",
                                   description=__doc__)
    parser.add_argument("--backend", choices=[BACKEND_EMBEDDED, BACKEND_LLAMA_SERVER], default=BACKEND_EMBEDDED,
                        help="engine to test (default: embedded)")
    parser.add_argument("--server-bin", metavar="PATH", help="llama-server to test (implies --backend llama-server)")
    parser.add_argument("--again", action="store_true", help="test again even if this build was tested here before")
    parser.add_argument("--rebuild", action="store_true",
                        help="rebuild the built-in engine for this processor (minutes), then test it")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    return parser


def _engines(args) -> list[tuple[str, str | None]]:
    if args.server_bin or args.backend == BACKEND_LLAMA_SERVER:
        return [(BACKEND_LLAMA_SERVER, _server_path(args.server_bin))]
    return [(BACKEND_EMBEDDED, None)]


def _server_path(user_path: str | None) -> str:
    from app.core.launch.backends import resolve_backend
    from app.core.launch.config import LaunchConfig

    backend = resolve_backend(LaunchConfig(model="", backend=BACKEND_LLAMA_SERVER, server_bin=user_path))
    return str(backend.path)


def _rebuild() -> None:
    from app.core.engine.rebuild import Phase, RebuildProgress, rebuild_embedded
    from app.core.text import T

    shown = {"percent": -1}

    def progress(step: RebuildProgress) -> None:
        if step.phase is Phase.BUILDING and step.fraction is not None:
            percent = int(step.fraction * 100)
            if percent >= shown["percent"] + 5:
                shown["percent"] = percent
                print(T("  building the engine: {percent} %", "  正在构建引擎：{percent} %", percent=percent),
                      file=sys.stderr)
        elif step.phase is not Phase.BUILDING:
            print(T("  testing the processor ...", "  正在测试处理器……") if step.phase is Phase.PROBING
                  else T("  testing the rebuilt engine ...", "  正在测试重新构建的引擎……"), file=sys.stderr)

    rebuild_embedded(progress)


def run(args: argparse.Namespace) -> int:
    from app.core.engine import report
    from app.core.server.engine_check import run_check

    try:
        if args.rebuild:
            _rebuild()
        engines = _engines(args)
        checks = [(engine, path, run_check(engine, path, use_cache=not args.again))
                  for engine, path in engines]
    except UserError as error:
        return report_user_error(error, args.json)
    rows = [report.check_row(check, engine, path) for engine, path, check in checks]
    if args.json:
        print_json({"ok": all(r.status is Status.OK for r in rows),
                    "engines": [dict(check.to_dict(), path=path, check=row.to_dict())
                                for (_, path, check), row in zip(checks, rows, strict=True)]})
    else:
        for row in rows:
            print_check(row)
            if row.status is not Status.OK:
                for line in row.evidence:
                    print(f"       | {inert(line)}")
    return 0 if all(r.status is Status.OK for r in rows) else 1
