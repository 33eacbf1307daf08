"""Which shared libraries a program would fail to load, found the way the dynamic loader finds them.

Search order for each DT_NEEDED name (ld.so(8)): the needing object's DT_RPATH, LD_LIBRARY_PATH, its DT_RUNPATH,
the directories the loader cache is built from (/etc/ld.so.conf and its includes), then the default directories.
A name still missing is looked up in ``ldconfig -p`` (the cache itself) before it counts as missing.
``search`` replaces LD_LIBRARY_PATH and everything after the run paths (the cache too), so a test can hand in a
folder that lacks one library; the run paths stay, as they lead to the libraries PySide6 ships.
"""

from __future__ import annotations

import glob
import logging
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from app.core.platform.elf import ElfInfo, read_elf

logger = logging.getLogger(__name__)

_TRIPLETS = {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu", "armv7l": "arm-linux-gnueabihf",
             "ppc64le": "powerpc64le-linux-gnu", "s390x": "s390x-linux-gnu", "riscv64": "riscv64-linux-gnu",
             "i686": "i386-linux-gnu"}


def system_dirs(conf: Path = Path("/etc/ld.so.conf")) -> list[Path]:
    """The loader cache's directories, then the defaults (Debian's multiarch ones too)."""
    dirs = _conf_dirs(conf, set())
    triplet = _TRIPLETS.get(platform.machine())
    for base in ("/lib", "/usr/lib"):
        if triplet:
            dirs.append(Path(base) / triplet)
    dirs += [Path(p) for p in ("/lib64", "/usr/lib64", "/lib", "/usr/lib")]
    return list(dict.fromkeys(dirs))


def _conf_dirs(conf: Path, seen: set[Path]) -> list[Path]:
    if conf in seen:
        return []
    seen.add(conf)
    try:
        lines = conf.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    dirs: list[Path] = []
    for raw in lines:
        line = raw.split("#", 1)[0].strip()
        if line.startswith("include "):
            pattern = line[len("include "):].strip()
            pattern = pattern if pattern.startswith("/") else str(conf.parent / pattern)
            for included in sorted(glob.glob(pattern)):
                dirs += _conf_dirs(Path(included), seen)
        elif line.startswith("/"):
            dirs.append(Path(line))
    return dirs


def _expand(entries: Sequence[str], origin: Path) -> list[Path]:
    tokens = {"ORIGIN": str(origin), "LIB": "lib64" if sys.maxsize > 2**32 else "lib",
              "PLATFORM": _TRIPLETS.get(platform.machine(), "")}
    expanded = []
    for entry in entries:
        if "$" in entry:
            for token, value in tokens.items():
                entry = entry.replace("${" + token + "}", value).replace("$" + token, value)
        expanded.append(Path(entry))
    return expanded


def _find(name: str, dirs: Sequence[Path], owner: ElfInfo) -> tuple[Path, ElfInfo] | None:
    candidates = [Path(name)] if "/" in name else [folder / name for folder in dirs]
    for candidate in candidates:
        info = read_elf(candidate)
        if info is not None and info.loads_beside(owner):
            return candidate.absolute(), info
    return None


def resolve_tree(program: Path, *, search: Sequence[Path] | None = None,
                 env: Mapping[str, str] = os.environ) -> dict[str, Path | None]:
    """Every DT_NEEDED name, direct or indirect, of ``program`` -> where the loader finds it (None: nowhere)."""
    root = read_elf(program)
    if root is None:
        raise FileNotFoundError(f"{program} is not a readable ELF file")
    shared = list(search) if search is not None else system_dirs()
    ld_path = [] if search is not None else [Path(p) for p in env.get("LD_LIBRARY_PATH", "").split(":") if p]
    cache: dict[str, list[Path]] | None = {} if search is not None else None
    found: dict[str, Path | None] = {}
    pending = [(program.absolute(), root)]
    while pending:
        path, info = pending.pop()
        origin = path.parent
        dirs = (_expand(info.rpath, origin) if not info.runpath else []) + ld_path + _expand(info.runpath, origin)
        for name in info.needed:
            if name in found:
                continue
            hit = _find(name, dirs + shared, root)
            if hit is None:
                if cache is None:
                    cache = ldconfig_cache()
                hit = _find(name, [path.parent for path in cache.get(name, ())], root)
            found[name] = hit[0] if hit else None
            if hit:
                pending.append(hit)
    return found


def missing_libraries(program: Path, *, search: Sequence[Path] | None = None,
                      env: Mapping[str, str] = os.environ) -> list[str]:
    """The names in ``resolve_tree`` that the loader would not find ([] when the program loads)."""
    return [name for name, path in resolve_tree(program, search=search, env=env).items() if path is None]


def ldconfig_cache() -> dict[str, list[Path]]:
    """soname -> paths from ``ldconfig -p``; empty when ldconfig is not there (musl, some containers)."""
    ldconfig = shutil.which("ldconfig") or next(
        (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.access(p, os.X_OK)), None)
    if ldconfig is None:
        return {}
    try:
        out = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=10, check=False).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        logger.warning("ldconfig -p failed: %s", exc)
        return {}
    cache: dict[str, list[Path]] = {}
    for line in out.splitlines():
        name, sep, target = line.strip().partition(" => ")
        if sep:
            cache.setdefault(name.split(" (", 1)[0], []).append(Path(target.strip()))
    return cache
