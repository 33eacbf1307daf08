"""Unpack a release archive (.zip or .tar.gz) into a folder without letting it write anywhere else.

Refused, with the entry's name: an absolute path or a drive, a ``..`` part (zip-slip), a zip entry that is a
symbolic link, a tar device or pipe, and a tar link whose target is not a plain file name in the same folder.
llama.cpp's Linux tarballs do hold such sibling links (``libllama.so -> libllama.so.0``: CMake's VERSION/SOVERSION
on the libraries, src/CMakeLists.txt), so those are kept, made only after every file is out and only when the
target is a file the archive itself holds. One folder that holds every entry (``llama-b11434/``) is dropped, so
each archive of a build lands flat in the same folder. A damaged or truncated archive raises; the caller removes
the half-filled folder.

Before a byte is written, the sizes the archive declares (a zip's central directory, each tar header as it is read)
are added up: more than a build can be (MAX_UNPACKED_BYTES), or more than the disk has free, is refused at once (a
zip bomb never fills the disk); so is an archive of more than MAX_ENTRIES entries, and a name with control
characters or a colon (on Windows an alternate data stream). A zip's entry cannot grow past its declared size
(zipfile stops there and the CRC fails); the running count while copying is kept as a second guard.
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from app.core.hub.github_release import shown_name
from app.core.text import T, Text, human_bytes

logger = logging.getLogger(__name__)

MAX_UNPACKED_BYTES = 16 << 30  # a CUDA build with its runtime is about 2 GB unpacked; more is not a release
MAX_ENTRIES = 10_000  # llama.cpp's archives hold tens of files (the Ubuntu CUDA tarball ~100 with its links)
SPACE_MARGIN = 100 << 20  # left free beyond the unpacked build (as the downloader leaves beyond a download)
_DRIVE = re.compile(r"^[A-Za-z]:")
_ODD = re.compile(r"[\x00-\x1f\x7f:]")
CheckStop = Callable[[], None]
FreeBytes = Callable[[Path], int]


def free_bytes(folder: Path) -> int:
    return shutil.disk_usage(folder).free


class UnsafeArchive(Exception):
    """An entry that would write outside the folder or is a link or device; ``entry`` names it."""

    def __init__(self, entry: str, why: Text) -> None:
        super().__init__(f"{shown_name(entry)}: {why.render('en')}")
        self.entry = shown_name(entry)
        self.why = why


class BadArchive(Exception):
    """The archive cannot be read to its end (truncated, damaged, not an archive)."""


class ArchiveRefused(Exception):
    """Refused before a byte is written: ``why`` is a clause ("it would unpack to 40 GB, ..."); ``disk``: because the
    disk has too little free space (not because the archive is not a build)."""

    def __init__(self, why: Text, *, disk: bool = False) -> None:
        super().__init__(why.render("en"))
        self.why = why
        self.disk = disk


def _parts(name: str) -> tuple[str, ...]:
    """An entry's path parts, or UnsafeArchive when it is absolute, on a drive, or climbs out with ``..``."""
    posix = name.replace("\\", "/")
    if posix.startswith("/") or _DRIVE.match(posix):
        raise UnsafeArchive(name, T("an absolute path", "绝对路径"))
    parts = tuple(part for part in PurePosixPath(posix).parts if part not in ("", "."))
    if ".." in parts:
        raise UnsafeArchive(name, T("a path that leads out of the folder", "指向文件夹之外的路径"))
    if _ODD.search(posix):
        raise UnsafeArchive(name, T("a name with control characters or a colon", "名称中含有控制字符或冒号"))
    return parts


def _check_sizes(total: int, entries: int, target: Path, free: FreeBytes) -> None:
    """ArchiveRefused when ``entries`` or ``total`` declared bytes are more than a build has, or than the disk of
    ``target`` has free (beyond SPACE_MARGIN)."""
    if entries > MAX_ENTRIES:
        raise ArchiveRefused(T("it holds more than {limit} entries, more than a llama.cpp build has",
                               "其中的条目超过 {limit} 个，比 llama.cpp 的任何版本都多", limit=MAX_ENTRIES))
    if total > MAX_UNPACKED_BYTES:
        raise ArchiveRefused(T("it would unpack to more than {limit}, more than a llama.cpp build can be",
                               "解压后会超过 {limit}，比 llama.cpp 的任何版本都大",
                               limit=human_bytes(MAX_UNPACKED_BYTES)))
    available = free(target) - SPACE_MARGIN
    if total > available:
        raise ArchiveRefused(T("it unpacks to {size} and the disk of {folder} has {free} free",
                               "解压后有 {size}，而 {folder} 所在磁盘只剩 {free} 可用空间", size=human_bytes(total),
                               folder=str(target.parent), free=human_bytes(max(0, available + SPACE_MARGIN))),
                             disk=True)


def _common_top(names: list[tuple[str, ...]]) -> int:
    """1 when every entry lies under one folder (which is then dropped), else 0."""
    tops = {parts[0] for parts in names if parts}
    deeper = any(len(parts) > 1 for parts in names)
    return 1 if len(tops) == 1 and deeper else 0


def unpack(archive: Path, target: Path, check_stop: CheckStop = lambda: None, free: FreeBytes | None = None
           ) -> list[Path]:
    """Unpack ``archive`` into ``target`` (created); the files written. UnsafeArchive / BadArchive / ArchiveRefused
    on refusal. ``free``: a folder's free bytes (None: free_bytes, looked up now so a test can give its reading)."""
    free = free or free_bytes
    target.mkdir(parents=True, exist_ok=True)
    try:
        if archive.name.endswith(".zip"):
            return _unzip(archive, target, check_stop, free)
        return _untar(archive, target, check_stop, free)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error) as error:
        raise BadArchive(f"{archive.name}: {error or type(error).__name__}") from error


def _place(target: Path, parts: tuple[str, ...], skip: int) -> Path | None:
    kept = parts[skip:]
    return target.joinpath(*kept) if kept else None


def _copy(source, destination: Path, mode: int, budget: list[int], check_stop: CheckStop) -> None:
    destination.parent.mkdir(parents=True, exist_ok=True)
    if destination.is_symlink():  # a link an earlier archive made: replace it, never write through it
        destination.unlink()
    with open(destination, "wb") as out:
        while block := source.read(1 << 20):
            budget[0] -= len(block)
            if budget[0] < 0:
                raise BadArchive(f"it unpacks to more than {MAX_UNPACKED_BYTES >> 30} GiB")
            out.write(block)
            check_stop()
    if mode & 0o111:
        destination.chmod(0o755)


def _unzip(archive: Path, target: Path, check_stop: CheckStop, free: FreeBytes) -> list[Path]:
    written: list[Path] = []
    budget = [MAX_UNPACKED_BYTES]
    with zipfile.ZipFile(archive) as bundle:
        infos = bundle.infolist()
        _check_sizes(sum(info.file_size for info in infos), len(infos), target, free)
        names = [_parts(info.filename) for info in infos]
        for info in infos:
            if stat.S_ISLNK(info.external_attr >> 16):
                raise UnsafeArchive(info.filename, T("a symbolic link", "符号链接"))
        skip = _common_top(names)
        for info, parts in zip(infos, names, strict=True):
            place = _place(target, parts, skip)
            if place is None:
                continue
            with _placing(info.filename):
                if info.is_dir():
                    place.mkdir(parents=True, exist_ok=True)
                    continue
                with bundle.open(info) as source:
                    _copy(source, place, (info.external_attr >> 16) & 0o777, budget, check_stop)
            written.append(place)
    return written


def _tar_members(bundle: tarfile.TarFile, target: Path, free: FreeBytes) -> list[tarfile.TarInfo]:
    """Every member, read header by header (a truncated archive fails here), refused as soon as the sizes declared
    so far are too many or too large: a bomb's first header already says so, before its bytes are inflated."""
    members: list[tarfile.TarInfo] = []
    total = 0
    for member in bundle:
        members.append(member)
        total += member.size if member.isfile() else 0
        _check_sizes(total, len(members), target, free)
    return members


def _untar(archive: Path, target: Path, check_stop: CheckStop, free: FreeBytes) -> list[Path]:
    written: list[Path] = []
    budget = [MAX_UNPACKED_BYTES]
    links: list[tuple[Path, str, str]] = []
    with tarfile.open(archive, "r:*") as bundle:
        members = _tar_members(bundle, target, free)
        names = [_parts(member.name) for member in members]
        skip = _common_top(names)
        for member, parts in zip(members, names, strict=True):
            place = _place(target, parts, skip)
            if place is None:
                continue
            if member.isdir():
                with _placing(member.name):
                    place.mkdir(parents=True, exist_ok=True)
            elif member.isfile():
                source = bundle.extractfile(member)
                if source is None:
                    raise BadArchive(f"{member.name} cannot be read")
                with source, _placing(member.name):
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
        for place, link_target, name in ready:
            with _placing(name):
                _sibling_link(place, link_target)
            written.append(place)
        links = [link for link in links if link not in ready]
    return written


@contextmanager
def _placing(entry: str) -> Iterator[None]:
    """An entry whose place another entry already holds (a file where a folder goes, or the reverse) is refused
    with its name: said as the archive's fault, not the disk's."""
    try:
        yield
    except (FileExistsError, NotADirectoryError, IsADirectoryError) as error:
        logger.info("archive entry %s: %s", shown_name(entry), error)
        raise UnsafeArchive(entry, T("a path another entry of the archive already holds (a file where a folder "
                                     "goes, or the reverse)",
                                     "另一个条目已占用的路径（文件占了文件夹的位置，或者相反）")) from error


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
