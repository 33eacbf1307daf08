"""The engine a command runs when ``--backend`` is not given: llama-server, or the built-in engine when llama-server
cannot run here, with the window's one sentence saying why (``app.core.launch.engine_choice``)."""

from __future__ import annotations

import argparse
import sys

from app.core.launch.config import BACKENDS
from app.core.launch.engine_choice import automatic_engine

BACKEND_HELP = ("engine: llama-server (default) or embedded, the built-in llama-cpp-python (the default when "
                "llama-server cannot run here)")


def add_backend_argument(parser: argparse.ArgumentParser, help_text: str = BACKEND_HELP) -> None:
    parser.add_argument("--backend", choices=list(BACKENDS), default=None, help=help_text)


def chosen_backend(args: argparse.Namespace, *, quiet: bool = False) -> str:
    """``--backend`` when given, else the automatic engine; its fallback sentence goes to stderr unless ``quiet``
    (stdout stays one JSON document for ``--json``)."""
    if args.backend:
        return args.backend
    choice = automatic_engine(getattr(args, "server_bin", None))
    if choice.reason is not None and not quiet:
        sys.stderr.write(f"note: {choice.reason}\n")
    return choice.backend
