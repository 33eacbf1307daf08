"""JSON files the app keeps in its own folders (settings, caches, records), read within bounds.

Only a regular file is read (a FIFO would block for ever, a link to ``/dev/zero`` would fill the memory), at most
:data:`MAX_BYTES` of it, and no deeper than :data:`MAX_DEPTH` nested arrays or objects (deeper JSON makes the
decoder and everything that walks the value run out of stack). Anything else raises :class:`UnreadableJson` with a
short reason the caller can put in a sentence; a missing file raises ``FileNotFoundError`` as before.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from app.core.text import T, Text

MAX_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class UnreadableJson(ValueError):
    """The file is not a regular file, too big, too deep, not UTF-8 or not JSON; ``reason`` says which."""

    def __init__(self, reason: Text) -> None:
        super().__init__(reason.render("en"))
        self.reason = reason


def _not_regular() -> UnreadableJson:
    return UnreadableJson(T("it is not a regular file", "它不是普通文件"))


def _read_bounded(path: Path, max_bytes: int) -> bytes:
    if not stat.S_ISREG(os.stat(path).st_mode):  # before opening: opening a device may already do something
        raise _not_regular()
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        info = os.fstat(fd)  # what was opened, in case the name was swapped after the check
        if not stat.S_ISREG(info.st_mode):
            raise _not_regular()
        if info.st_size > max_bytes:
            raise _too_big(max_bytes)
        chunks, total = [], 0
        while total <= max_bytes:
            chunk = os.read(fd, max_bytes + 1 - total)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    finally:
        os.close(fd)
    if total > max_bytes:  # it grew while being read
        raise _too_big(max_bytes)
    return b"".join(chunks)


def _too_big(max_bytes: int) -> UnreadableJson:
    mib = max_bytes // (1024 * 1024)
    return UnreadableJson(T("it is larger than {mib} MiB", "它大于 {mib} MiB", mib=mib))


def nesting_depth(text: str, limit: int) -> int:
    """How deep arrays and objects nest in JSON ``text`` (brackets inside strings not counted); stops counting
    once past ``limit``."""
    depth = deepest = 0
    for char in _NOT_BRACKET.sub("", _STRING.sub("", text)):
        depth += 1 if char in "[{" else -1
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                break
    return deepest


def loads_bounded(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` that refuses JSON nested deeper than ``max_depth`` (UnreadableJson)."""
    if nesting_depth(text, max_depth) > max_depth:
        raise UnreadableJson(T("it is nested more than {n} levels deep", "它的嵌套超过 {n} 层", n=max_depth))
    try:
        return json.loads(text)
    except ValueError:
        raise UnreadableJson(T("it is damaged", "文件已损坏")) from None


def read_text(path: str | os.PathLike[str], *, max_bytes: int = MAX_BYTES) -> str:
    """The text of a regular file of at most ``max_bytes`` (undecodable bytes replaced); OSError when it cannot be
    read, UnreadableJson when it is not a regular file or too big. For files of JSON lines."""
    return _read_bounded(Path(path), max_bytes).decode("utf-8", errors="replace")


def read_json(path: str | os.PathLike[str], *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value in the file at ``path``: a regular file of at most ``max_bytes``, nested at most ``max_depth``.
    OSError when it cannot be opened or read (FileNotFoundError when missing), UnreadableJson otherwise."""
    data = _read_bounded(Path(path), max_bytes)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UnreadableJson(T("it is damaged", "文件已损坏")) from None
    return loads_bounded(text, max_depth=max_depth)
