"""Unpack a release archive (.zip or .tar.gz) into a folder without letting it write anywhere else.

Refused, with the entry's name: an absolute path or a drive, a ``..`` part (zip-slip), a zip entry that is a
symbolic link, a tar device or pipe, and a tar link whose target is not a plain file name in the same folder.
llama.cpp's Linux tarballs do hold such sibling links (``libllama.so -> libllama.so.0``: CMake's VERSION/SOVERSION
on the libraries, src/CMakeLists.txt), so those are kept, made only after every file is out and only when the
target is a file the archive itself holds. One folder that holds every entry (``llama-b11434/``) is dropped, so
each archive of a build lands flat in the same folder. A damaged or truncated archive raises; the caller removes
the half-filled folder.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from app.core.text import T, Text

logger = logging.getLogger(__name__)

MAX_UNPACKED_BYTES = 16 << 30  # a CUDA build with its runtime is about 2 GB unpacked; more is not a release
_DRIVE = re.compile(r"^[A-Za-z]:")
CheckStop = Callable[[], None]


class UnsafeArchive(Exception):
    """An entry that would write outside the folder or is a link or device; ``entry`` names it."""

    def __init__(self, entry: str, why: Text) -> None:
        super().__init__(f"{entry}: {why.render('en')}")
        self.entry = entry
        self.why = why


class BadArchive(Exception):
    """The archive cannot be read to its end (truncated, damaged, not an archive)."""


def _parts(name: str) -> tuple[str, ...]:
    """An entry's path parts, or UnsafeArchive when it is absolute, on a drive, or climbs out with ``..``."""
    posix = name.replace("\\", "/")
    if posix.startswith("/") or _DRIVE.match(posix):
        raise UnsafeArchive(name, T("an absolute path", "绝对路径"))
    parts = tuple(part for part in PurePosixPath(posix).parts if part not in ("", "."))
    if ".." in parts:
        raise UnsafeArchive(name, T("a path that leads out of the folder", "指向文件夹之外的路径"))
    return parts


def _common_top(names: list[tuple[str, ...]]) -> int:
    """1 when every entry lies under one folder (which is then dropped), else 0."""
    tops = {parts[0] for parts in names if parts}
    deeper = any(len(parts) > 1 for parts in names)
    return 1 if len(tops) == 1 and deeper else 0


def unpack(archive: Path, target: Path, check_stop: CheckStop = lambda: None) -> list[Path]:
    """Unpack ``archive`` into ``target`` (created); the files written. UnsafeArchive / BadArchive on refusal."""
    target.mkdir(parents=True, exist_ok=True)
    try:
        if archive.name.endswith(".zip"):
            return _unzip(archive, target, check_stop)
        return _untar(archive, target, check_stop)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error) as error:
        raise BadArchive(f"{archive.name}: {error or type(error).__name__}") from error


def _place(target: Path, parts: tuple[str, ...], skip: int) -> Path | None:
    kept = parts[skip:]
    return target.joinpath(*kept) if kept else None


def _copy(source, destination: Path, mode: int, budget: list[int], check_stop: CheckStop) -> None:
    destination.parent.mkdir(parents=True, exist_ok=True)
    with open(destination, "wb") as out:
        while block := source.read(1 << 20):
            budget[0] -= len(block)
            if budget[0] < 0:
                raise BadArchive(f"it unpacks to more than {MAX_UNPACKED_BYTES >> 30} GiB")
            out.write(block)
            check_stop()
    if mode & 0o111:
        destination.chmod(0o755)


def _unzip(archive: Path, target: Path, check_stop: CheckStop) -> list[Path]:
    written: list[Path] = []
    budget = [MAX_UNPACKED_BYTES]
    with zipfile.ZipFile(archive) as bundle:
        infos = bundle.infolist()
        names = [_parts(info.filename) for info in infos]
        for info in infos:
            if stat.S_ISLNK(info.external_attr >> 16):
                raise UnsafeArchive(info.filename, T("a symbolic link", "符号链接"))
        skip = _common_top(names)
        for info, parts in zip(infos, names, strict=True):
            place = _place(target, parts, skip)
            if place is None:
                continue
            if info.is_dir():
                place.mkdir(parents=True, exist_ok=True)
                continue
            with bundle.open(info) as source:
                _copy(source, place, (info.external_attr >> 16) & 0o777, budget, check_stop)
            written.append(place)
    return written


def _untar(archive: Path, target: Path, check_stop: CheckStop) -> list[Path]:
    written: list[Path] = []
    budget = [MAX_UNPACKED_BYTES]
    links: list[tuple[Path, str, str]] = []
    with tarfile.open(archive, "r:*") as bundle:
        members = bundle.getmembers()  # reads the whole archive: a truncated one fails here
        names = [_parts(member.name) for member in members]
        skip = _common_top(names)
        for member, parts in zip(members, names, strict=True):
            place = _place(target, parts, skip)
            if place is None:
                continue
            if member.isdir():
                place.mkdir(parents=True, exist_ok=True)
            elif member.isfile():
                source = bundle.extractfile(member)
                if source is None:
                    raise BadArchive(f"{member.name} cannot be read")
                with source:
                    _copy(source, place, member.mode, budget, check_stop)
                written.append(place)
            elif member.issym() or member.islnk():
                links.append((place, member.linkname, member.name))
            else:
                raise UnsafeArchive(member.name, T("a device, pipe or other special file",
                                                   "设备、管道或其他特殊文件"))
    for _, link_target, name in links:
        if not link_target or "/" in link_target or "\\" in link_target or link_target in (".", ".."):
            raise UnsafeArchive(name, T("a link to {target}, not to a file beside it",
                                        "指向 {target} 的链接，而不是指向同一文件夹中的文件",
                                        target=link_target or "nothing"))
    while links:  # a chain (libllama.so -> libllama.so.0 -> libllama.so.0.6.0) is made from its end
        ready = [link for link in links if _present(link[0].parent / link[1])]
        if not ready:
            place, link_target, name = links[0]
            raise UnsafeArchive(name, T("a link to {target}, which the archive does not hold",
                                        "指向 {target} 的链接，而压缩包中没有该文件", target=link_target))
        for place, link_target, _ in ready:
            _sibling_link(place, link_target)
            written.append(place)
        links = [link for link in links if link not in ready]
    return written


def _present(path: Path) -> bool:
    return path.is_symlink() or path.is_file()


def _sibling_link(place: Path, link_target: str) -> None:
    """A link to a file beside it (``libllama.so -> libllama.so.0``), as a link where the system allows it, else a
    copy of the file."""
    source = place.parent / link_target
    place.parent.mkdir(parents=True, exist_ok=True)
    if place.is_symlink() or place.exists():
        place.unlink()
    try:
        os.symlink(link_target, place)
    except OSError:  # Windows without the right to make links: the same bytes under the link's name
        shutil.copyfile(source.resolve(), place)
