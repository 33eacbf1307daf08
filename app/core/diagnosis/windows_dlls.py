"""Which DLLs a Windows program needs and which of them are missing: the evidence behind 0xC0000135.

A Windows executable names the DLLs it needs in its PE import table; the loader looks for them beside the program,
then in the system folders and on PATH. Recent llama.cpp builds make ``llama-server.exe`` a thin launcher that
imports ``llama-server-impl.dll``, which imports ``llama-common.dll``, ``llama.dll``, ``ggml.dll`` and ``ggml-base.dll``
(the backends ``ggml-cpu-*.dll``/``ggml-cuda.dll`` are loaded at run time). Reading the import tables (the program's,
then those of the engine DLLs found beside it) tells which file is missing, without running anything, on any OS.

Absence is claimed only where it is proved: an engine DLL (llama*/ggml*/mtmd*) missing beside the program, where the
release zip puts every one of them; a Visual C++ runtime DLL found neither beside the program nor in the system
folders searched; any other DLL (OpenSSL, a CUDA runtime) only when system folders were searched (on Windows).
"""

from __future__ import annotations

import logging
import os
import re
import struct
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

_ENGINE_DLL = re.compile(r"^(?:llama|ggml|mtmd)[\w.-]*\.dll$", re.IGNORECASE)
_VC_RUNTIME_DLL = re.compile(r"^(?:msvcp140|vcruntime140|concrt140|vcomp140)(?:_\w+)?\.dll$", re.IGNORECASE)
_MAX_FILE = 512 << 20  # a program or DLL larger than this is not read (a CUDA DLL is ~100-500 MiB: skipped)
_API_SETS = ("api-ms-", "ext-ms-")
VC_REDIST = "vc_redist.x64.exe"  # Microsoft's "Latest supported Visual C++ Redistributable downloads" page


@dataclass(frozen=True)
class MissingDlls:
    """What the import tables say is missing. ``checked``: the program itself could be read."""

    checked: bool
    engine: tuple[str, ...] = ()  # engine DLLs missing beside the program
    vc_runtime: tuple[str, ...] = ()  # Visual C++ runtime DLLs found nowhere searched
    other: tuple[str, ...] = ()  # any other DLL found nowhere searched (only when system folders were searched)

    @property
    def any(self) -> bool:
        return bool(self.engine or self.vc_runtime or self.other)


def _rva_to_offset(rva: int, sections: list[tuple[int, int, int]]) -> int | None:
    for virtual_address, size, raw_offset in sections:
        if virtual_address <= rva < virtual_address + size:
            return rva - virtual_address + raw_offset
    return None


def _c_string(data: bytes, offset: int) -> str:
    end = data.find(b"\0", offset, offset + 260)
    return data[offset:end if end >= 0 else offset + 260].decode("ascii", "replace")


def pe_imports(data: bytes) -> list[str] | None:
    """The DLL names in a PE file's import table (and delay-load table), in order; None when ``data`` is no PE."""
    if len(data) < 0x40 or data[:2] != b"MZ":
        return None
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    if pe + 24 > len(data) or data[pe:pe + 4] != b"PE\0\0":
        return None
    sections_count = struct.unpack_from("<H", data, pe + 6)[0]
    optional_size = struct.unpack_from("<H", data, pe + 20)[0]
    optional = pe + 24
    magic = struct.unpack_from("<H", data, optional)[0]
    directories = optional + (112 if magic == 0x20B else 96)  # PE32+ / PE32
    section_table = optional + optional_size
    sections = []
    for index in range(sections_count):
        entry = section_table + 40 * index
        if entry + 40 > len(data):
            return None
        virtual_size, virtual_address, raw_size, raw_offset = struct.unpack_from("<IIII", data, entry + 8)
        sections.append((virtual_address, max(virtual_size, raw_size), raw_offset))
    names: list[str] = []
    for directory, descriptor_size, name_field in ((1, 20, 12), (13, 32, 4)):  # imports, delay-load imports
        entry = directories + 8 * directory
        if entry + 8 > optional + optional_size:
            continue
        rva = struct.unpack_from("<I", data, entry)[0]
        offset = _rva_to_offset(rva, sections) if rva else None
        while offset is not None and offset + descriptor_size <= len(data):
            name_rva = struct.unpack_from("<I", data, offset + name_field)[0]
            if name_rva == 0:
                break
            name_offset = _rva_to_offset(name_rva, sections)
            if name_offset is not None:
                names.append(_c_string(data, name_offset))
            offset += descriptor_size
    return names


def _imports_of(path: Path) -> list[str] | None:
    try:
        if path.stat().st_size > _MAX_FILE:
            return None
        return pe_imports(path.read_bytes())
    except OSError as error:
        log.debug("imports of %s unreadable: %s", path, error)
        return None


def system_dirs() -> list[Path]:
    """Where Windows looks for a DLL after the program's folder: System32 and PATH (empty off Windows)."""
    if sys.platform != "win32":
        return []
    root = os.environ.get("SystemRoot") or os.environ.get("windir") or r"C:\Windows"
    folders = [Path(root) / "System32"]
    folders += [Path(entry) for entry in os.environ.get("PATH", "").split(os.pathsep) if entry]
    return folders


def _present(folder: Path, name: str) -> bool:
    return (folder / name).is_file()


def missing_dlls(program: str | Path, search_dirs: Sequence[Path] | None = None) -> MissingDlls:
    """The engine and Visual C++ runtime DLLs ``program`` needs (directly or through the engine DLLs beside it) that
    are not where Windows would find them. ``search_dirs``: the system folders (default: System32 and PATH)."""
    exe = Path(program)
    folder = exe.parent
    searched = list(system_dirs() if search_dirs is None else search_dirs)
    imports = _imports_of(exe)
    if imports is None:
        return MissingDlls(checked=False)
    engine: list[str] = []
    runtime: list[str] = []
    other: list[str] = []
    queue, seen = list(imports), set()
    while queue:
        name = queue.pop(0)
        key = name.lower()
        if key in seen:
            continue
        seen.add(key)
        if _ENGINE_DLL.match(name):
            if _present(folder, name):
                queue.extend(_imports_of(folder / name) or ())
            else:
                engine.append(name)
        elif _present(folder, name) or any(_present(place, name) for place in searched):
            continue
        elif _VC_RUNTIME_DLL.match(name):
            runtime.append(name)
        elif searched and not key.startswith(_API_SETS):  # API sets are resolved by the loader, not found as files
            other.append(name)
    return MissingDlls(checked=True, engine=tuple(engine), vc_runtime=tuple(runtime), other=tuple(other))
