"""Smallest PE32+ files that name the DLLs they import, to lay out an engine folder as a release zip does (the
parser itself is also checked against real Windows programs, see test_windows_dlls.py)."""

from __future__ import annotations

import struct
from pathlib import Path

_PE_OFFSET = 0x40
_OPTIONAL_SIZE = 240  # PE32+: 112 bytes of fields + 16 data directories
_SECTION_RVA = 0x1000
_SECTION_OFFSET = 0x200


def pe_bytes(imports: list[str]) -> bytes:
    descriptors = 20 * (len(imports) + 1)
    names, name_rvas = b"", []
    for name in imports:
        name_rvas.append(_SECTION_RVA + descriptors + len(names))
        names += name.encode("ascii") + b"\0"
    section = b"".join(struct.pack("<IIIII", 0, 0, 0, rva, 0) for rva in name_rvas) + b"\0" * 20 + names
    dos = b"MZ" + b"\0" * (0x3C - 2) + struct.pack("<I", _PE_OFFSET)
    coff = b"PE\0\0" + struct.pack("<HHIIIHH", 0x8664, 1, 0, 0, 0, _OPTIONAL_SIZE, 0x22)
    optional = bytearray(_OPTIONAL_SIZE)
    struct.pack_into("<H", optional, 0, 0x20B)
    struct.pack_into("<II", optional, 112 + 8 * 1, _SECTION_RVA, descriptors)
    header = struct.pack("<8sIIIIIIHHI", b".idata", len(section), _SECTION_RVA, len(section), _SECTION_OFFSET,
                         0, 0, 0, 0, 0xC0000040)
    head = dos + coff + bytes(optional) + header
    return head + b"\0" * (_SECTION_OFFSET - len(head)) + section


def write_pe(path: Path, imports: list[str]) -> Path:
    path.write_bytes(pe_bytes(imports))
    return path


def llama_release(folder: Path, *, without: tuple[str, ...] = ()) -> Path:
    """A recent llama.cpp Windows release's import chain: llama-server.exe (a thin launcher) -> llama-server-impl.dll
    -> llama-common.dll -> llama.dll -> ggml.dll -> ggml-base.dll, plus the MSVC runtime; ``without`` leaves files
    out. Returns the program's path."""
    folder.mkdir(parents=True, exist_ok=True)
    layout = {
        "llama-server.exe": ["llama-server-impl.dll", "KERNEL32.dll", "MSVCP140.dll", "VCRUNTIME140.dll"],
        "llama-server-impl.dll": ["llama-common.dll", "llama.dll", "ggml.dll", "ggml-base.dll", "MSVCP140.dll",
                                  "VCRUNTIME140_1.dll", "KERNEL32.dll"],
        "llama-common.dll": ["llama.dll", "ggml-base.dll", "MSVCP140.dll"],
        "llama.dll": ["ggml.dll", "ggml-base.dll", "MSVCP140.dll", "VCRUNTIME140.dll"],
        "ggml.dll": ["ggml-base.dll", "KERNEL32.dll"],
        "ggml-base.dll": ["KERNEL32.dll", "VCRUNTIME140.dll"],
        "ggml-cpu-haswell.dll": ["ggml-base.dll"],  # a backend: loaded at run time, imported by nobody
    }
    for name, imports in layout.items():
        if name not in without:
            write_pe(folder / name, imports)
    return folder / "llama-server.exe"


def vc_runtime(folder: Path) -> Path:
    """A folder holding the Visual C++ runtime DLLs (System32 where it is installed)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("MSVCP140.dll", "VCRUNTIME140.dll", "VCRUNTIME140_1.dll"):
        write_pe(folder / name, ["KERNEL32.dll"])
    return folder


def system_folder(folder: Path) -> Path:
    """Windows' System32 as far as a llama.cpp build needs it: KERNEL32.dll and the Visual C++ runtime."""
    vc_runtime(folder)
    write_pe(folder / "KERNEL32.dll", [])
    return folder
