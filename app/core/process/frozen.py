"""Children that run the app's own Python code: ``python -c`` from source, the app re-launched when frozen.

A PyInstaller bundle has no interpreter to hand ``-c`` or ``-m`` to: its ``sys.executable`` is the app's own program.
There a child that runs one of the app's functions is started as ``<program> --run-child NAME ARGS...``, and
``app/__main__.py`` hands it to ``run_child`` before anything else is imported. Only the functions named in
CHILDREN can be run that way; each takes its arguments as a list and returns the exit status (None: 0).
"""

from __future__ import annotations

import importlib
import os
import sys

RUN_CHILD_SWITCH = "--run-child"
CHILDREN = {
    "quantize": "app.core.gguf.quantize:_child",
    "engine-selftest": "app.core.engine.selftest:_embedded_child",
    "cpu-feature": "app.core.engine.cpu_isa:_child",
    "demo-answer": "app.core.demo.answer:_child",
}


def is_frozen() -> bool:
    """True in a PyInstaller bundle (``sys.executable`` is the app, not Python)."""
    return bool(getattr(sys, "frozen", False))


def restore_library_path() -> None:
    """Give the programs this app starts the library path the user had.

    PyInstaller's bootloader puts the bundle's folder first on LD_LIBRARY_PATH (keeping the user's value in
    LD_LIBRARY_PATH_ORIG), and children inherit it: an external llama-server would load the bundle's libstdc++ and
    others instead of its own. The loader read the path when this process started, so changing it here touches
    only children; the app's own re-launches get the bundle's folder again from their bootloader."""
    if not is_frozen() or not sys.platform.startswith("linux"):
        return
    original = os.environ.pop("LD_LIBRARY_PATH_ORIG", None)
    if original is None:
        os.environ.pop("LD_LIBRARY_PATH", None)
    else:
        os.environ["LD_LIBRARY_PATH"] = original


def child_argv(name: str, args: list[str], python: str | None = None) -> list[str]:
    """The command line that runs CHILDREN[name] with ``args``: in ``python`` when given, else in this app."""
    module, function = CHILDREN[name].split(":")
    if python is None and is_frozen():
        return [sys.executable, RUN_CHILD_SWITCH, name, *args]
    code = f"import sys; from {module} import {function}; sys.exit({function}(sys.argv[1:]))"
    return [python or sys.executable, "-c", code, *args]


def run_child(argv: list[str]) -> int:
    """The child's side of ``--run-child NAME ARGS...``."""
    if not argv or argv[0] not in CHILDREN:
        sys.stderr.write(f"{RUN_CHILD_SWITCH}: expected one of {', '.join(sorted(CHILDREN))}\n")
        return 2
    module, function = CHILDREN[argv[0]].split(":")
    return getattr(importlib.import_module(module), function)(argv[1:]) or 0
