"""Find llama-server programs on this computer that can use a graphics card.

Looked for where people and other apps usually keep them:
- llama.cpp release zips unpacked in Downloads, the home folder or /opt (``llama-b6000-bin-ubuntu-vulkan-x64/``,
  with or without ``build/bin/``), and source builds in ``~/llama.cpp*/build/bin``;
- Jan's llama.cpp backends: ``<Jan data>/llamacpp/backends/<version>/<backend>/[build/bin/]llama-server``
  (Jan's ``get_backend_exe_path``; the data folder is ``~/.local/share/Jan/data`` on Linux,
  ``~/Library/Application Support/Jan/data`` on macOS, ``%APPDATA%\\Jan\\data`` on Windows; older ``~/jan``);
- LM Studio's: ``~/.lmstudio/extensions/backends/llama.cpp-<platform>-<gpu>-<version>/llama-server``;
- PATH and the places ``discovery.common_locations`` knows;
- the release builds the app downloaded and checked on this card (launch/fetched_engines.py), first.

Only programs whose own ``--version`` names a GPU backend (or that ship a GPU backend library next to them) are
kept; each is run (``--version``, ``--help``) once per file identity through ``discovery.inspect_llama_server``.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from app.core.launch import discovery
from app.core.launch.engine_folder import FolderCheck, check_engine_folder
from app.core.problem import UserError

logger = logging.getLogger(__name__)

GPU_BACKENDS = ("CUDA", "Vulkan", "ROCm", "Metal", "SYCL", "MUSA")
_GPU_NAMES = frozenset(name.upper() for name in (*GPU_BACKENDS, "HIP"))  # HIP: ROCm's older name in build lines


def has_gpu_backend(compiled_backends: Iterable[str]) -> bool:
    """Whether an engine's compiled backends include a graphics-card one (any spelling's case)."""
    return any(name.upper() in _GPU_NAMES for name in compiled_backends)
_LIBRARY_HINTS = {"cuda": "CUDA", "vulkan": "Vulkan", "hip": "ROCm", "metal": "Metal", "sycl": "SYCL"}
MAX_CANDIDATES = 40  # each unknown one is run twice; never let a crowded Downloads folder stall a scan


@dataclass(frozen=True)
class GpuServer:
    """A llama-server that can use a graphics card: its file, version line and GPU backends; the CUDA runtime
    version its folder carries ("12", "12.4") and the folder's check (engine_folder.py), when looked at."""

    path: str
    version_text: str
    gpu_backends: tuple[str, ...]
    cuda_version: str | None = None
    folder: FolderCheck | None = None


def search_roots(home: Path | None = None) -> list[Path]:
    """Folders whose children may be unpacked llama.cpp releases or other apps' backends."""
    home = home or Path.home()
    roots = [home / "Downloads", home, Path("/opt")]
    if os.name == "nt":
        roots += [Path(os.environ[var]) for var in ("LOCALAPPDATA", "ProgramFiles") if os.environ.get(var)]
    return roots


def jan_backend_dirs(home: Path | None = None) -> list[Path]:
    home = home or Path.home()
    data_home = Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share")
    places = [data_home / "Jan" / "data", home / "Library" / "Application Support" / "Jan" / "data",
              home / "jan", home / ".jan"]
    if os.environ.get("APPDATA"):
        places.append(Path(os.environ["APPDATA"]) / "Jan" / "data")
    return [place / "llamacpp" / "backends" for place in places]


def candidate_files(home: Path | None = None) -> list[Path]:
    """Every llama-server file in the usual places, PATH first; not yet run."""
    home = home or Path.home()
    exe = discovery.EXE_NAME
    from app.core.launch.fetched_engines import fetched_launchers

    found: list[Path] = fetched_launchers()  # builds the app downloaded and checked on this card (hub/engine_fetch)
    on_path = shutil.which(exe)
    if on_path:
        found.append(Path(on_path))
    found += [path for path in discovery.common_locations() if path.is_file()]
    for root in search_roots(home):
        for folder in _llama_folders(root):
            found += _in_release(folder, exe) or _in_release(folder, discovery.SINGLE_EXE_NAME)
    for backends in jan_backend_dirs(home):  # <version>/<backend>/[build/bin/]llama-server
        found += _globbed(backends, (f"*/*/{exe}", f"*/*/build/bin/{exe}"))
    found += _globbed(home / ".lmstudio" / "extensions" / "backends", (f"*/{exe}", f"*/*/{exe}"))
    return _unique(path for path in found if path.is_file())


def _llama_folders(root: Path) -> list[Path]:
    try:
        return sorted(child for child in root.iterdir() if "llama" in child.name.lower() and child.is_dir())
    except OSError:  # a root that does not exist or cannot be read has nothing to offer
        return []


def _in_release(folder: Path, exe: str) -> list[Path]:
    patterns = (exe, f"build/bin/{exe}", f"bin/{exe}", f"*/{exe}", f"*/build/bin/{exe}", f"*/bin/{exe}")
    return _globbed(folder, patterns)


def _globbed(folder: Path, patterns: Iterable[str]) -> list[Path]:
    if not folder.is_dir():
        return []
    return [path for pattern in patterns for path in sorted(folder.glob(pattern))]


def _unique(paths: Iterable[Path]) -> list[Path]:
    seen: set[Path] = set()
    kept: list[Path] = []
    for path in paths:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            kept.append(path)
    return kept


def library_backends(path: Path) -> tuple[str, ...]:
    """GPU backends a build ships as libraries next to its program (``libggml-cuda.so``, ``ggml-vulkan.dll``)."""
    try:
        names = " ".join(p.name.lower() for p in path.parent.iterdir() if "ggml" in p.name.lower())
    except OSError:
        return ()
    return tuple(label for key, label in _LIBRARY_HINTS.items() if f"ggml-{key}" in names)


def gpu_backends_of(path: Path) -> tuple[str, ...] | None:
    """The GPU backends this llama-server has; None when it does not run or is no llama-server."""
    try:
        facts = discovery.inspect_llama_server(path)
    except (UserError, OSError) as error:
        logger.info("skipping %s: %s", path, error)
        return None
    found = [name for name in facts.compiled_backends if name in GPU_BACKENDS]
    found += [name for name in library_backends(path) if name not in found]
    return tuple(found)


def find_gpu_servers(home: Path | None = None) -> list[GpuServer]:
    """The llama-server programs on this computer that can use a graphics card, in the order they were found."""
    servers: list[GpuServer] = []
    for path in candidate_files(home)[:MAX_CANDIDATES]:
        if not os.access(path, os.X_OK):
            continue
        backends = gpu_backends_of(path)
        if backends:
            facts = discovery.inspect_llama_server(path)
            folder = check_engine_folder(path)
            servers.append(GpuServer(str(path), facts.version_text, backends, folder.cuda_version, folder))
    return servers
