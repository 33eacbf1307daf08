"""Just enough of an ELF file to follow the dynamic loader: class, machine, DT_NEEDED and the run paths.

Only the program headers are read (as the loader does), a few hundred bytes per library, so following the
whole dependency tree of a Qt platform plugin takes milliseconds. A file that is not a readable ELF is None.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

_PT_LOAD, _PT_DYNAMIC = 1, 2
_DT_NULL, _DT_NEEDED, _DT_STRTAB, _DT_STRSZ, _DT_RPATH, _DT_RUNPATH = 0, 1, 5, 10, 15, 29
_MAX_PROGRAM_HEADERS = 512
_MAX_DYNAMIC_ENTRIES = 4096


@dataclass(frozen=True)
class ElfInfo:
    elf_class: int  # 1: 32-bit, 2: 64-bit
    machine: int  # e_machine (62: x86-64, 183: AArch64)
    needed: tuple[str, ...]  # DT_NEEDED sonames, in order
    rpath: tuple[str, ...]  # DT_RPATH entries, unexpanded ($ORIGIN stays)
    runpath: tuple[str, ...]  # DT_RUNPATH entries, unexpanded

    def loads_beside(self, other: ElfInfo) -> bool:
        """The loader skips a library of another class or machine found under the right name."""
        return (self.elf_class, self.machine) == (other.elf_class, other.machine)


def read_elf(path: Path) -> ElfInfo | None:
    try:
        with open(path, "rb") as file:
            return _parse(file)
    except (OSError, struct.error, ValueError):
        return None


def _parse(file) -> ElfInfo | None:
    ident = file.read(16)
    if len(ident) < 16 or ident[:4] != b"\x7fELF" or ident[4] not in (1, 2) or ident[5] not in (1, 2):
        return None
    is64, end = ident[4] == 2, "<" if ident[5] == 1 else ">"
    header = struct.unpack(end + ("HHIQQQIHHHHHH" if is64 else "HHIIIIIHHHHHH"), file.read(48 if is64 else 36))
    machine, phoff, phentsize, phnum = header[1], header[4], header[8], header[9]
    if phnum > _MAX_PROGRAM_HEADERS:
        return None
    loads, dynamic = [], None
    for index in range(phnum):
        file.seek(phoff + index * phentsize)
        if is64:
            p_type, _flags, offset, vaddr, _paddr, filesz = struct.unpack(end + "IIQQQQ", file.read(40))
        else:
            p_type, offset, vaddr, _paddr, filesz = struct.unpack(end + "IIIII", file.read(20))
        if p_type == _PT_LOAD:
            loads.append((vaddr, offset, filesz))
        elif p_type == _PT_DYNAMIC:
            dynamic = (offset, filesz)
    entries = _dynamic_entries(file, dynamic, end, is64) if dynamic else []
    values: dict[int, list[int]] = {}
    for tag, value in entries:
        values.setdefault(tag, []).append(value)
    strtab = _file_offset(loads, values.get(_DT_STRTAB, [None])[0])
    strsz = values.get(_DT_STRSZ, [0])[0]

    def strings(tag: int) -> tuple[str, ...]:
        if strtab is None:
            return ()
        return tuple(_string(file, strtab, offset, strsz) for offset in values.get(tag, ()))

    def paths(tag: int) -> tuple[str, ...]:
        return tuple(part for entry in strings(tag) for part in entry.split(":") if part)

    return ElfInfo(ident[4], machine, strings(_DT_NEEDED), paths(_DT_RPATH), paths(_DT_RUNPATH))


def _dynamic_entries(file, dynamic: tuple[int, int], end: str, is64: bool) -> list[tuple[int, int]]:
    offset, size = dynamic
    width = 16 if is64 else 8
    file.seek(offset)
    data = file.read(min(size, _MAX_DYNAMIC_ENTRIES * width))
    entries = []
    for tag, value in struct.iter_unpack(end + ("qQ" if is64 else "iI"), data[: len(data) // width * width]):
        if tag == _DT_NULL:
            break
        entries.append((tag, value))
    return entries


def _file_offset(loads: list[tuple[int, int, int]], address: int | None) -> int | None:
    """Where the loaded address lies in the file (DT_STRTAB is an address, not an offset)."""
    if address is None:
        return None
    for vaddr, offset, filesz in loads:
        if vaddr <= address < vaddr + filesz:
            return offset + address - vaddr
    return None


def _string(file, strtab: int, offset: int, strsz: int) -> str:
    if strsz and offset >= strsz:
        raise ValueError("string outside the string table")
    file.seek(strtab + offset)
    data = b""
    while b"\0" not in data and len(data) < 4096:
        chunk = file.read(256)
        if not chunk:
            break
        data += chunk
    return data.split(b"\0", 1)[0].decode("utf-8", "replace")
