"""Answers that leave this computer name the model by its file name, never by its absolute path.

Both engines put the model's path in their answers: llama-server in ``/v1/models`` (``id``, ``name``, ``model``),
``/props`` (``model_path``) and the ``model`` field of every completion and streamed chunk; the built-in engine in
``/v1/models`` and every completion. The path holds the home folder, so the user name. :class:`PathScrub` rewrites
an answer's bytes as they pass, chunk by chunk: each path (as raw text and as JSON writes it, with or without
``\\u`` escapes) becomes its file name. Only the bytes that could start a path are held back between chunks, so a
streamed token is not delayed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import PurePath, PurePosixPath, PureWindowsPath


def _file_name(path: str) -> str:
    windows = PureWindowsPath(path)
    return windows.name if "\\" in path else PurePosixPath(path).name


def _forms(path: str) -> list[tuple[bytes, bytes]]:
    """(path, file name) in each form an answer may write them: raw UTF-8, JSON, JSON with \\u escapes."""
    name = _file_name(path)
    pairs = [(path.encode(), name.encode()),
             (json.dumps(path, ensure_ascii=False)[1:-1].encode(), json.dumps(name, ensure_ascii=False)[1:-1].encode()),
             (json.dumps(path)[1:-1].encode(), json.dumps(name)[1:-1].encode())]
    return list(dict.fromkeys(pairs))


class PathScrub:
    """Feed an answer's chunks in order, then ``end()``: the same bytes with every path replaced."""

    def __init__(self, paths: Sequence[str | PurePath]):
        forms = [form for path in paths if path and str(path).strip("/\\") for form in _forms(str(path))]
        self._forms = sorted(forms, key=lambda pair: len(pair[0]), reverse=True)  # a longer path first
        self._held = b""

    @property
    def active(self) -> bool:
        return bool(self._forms)

    def feed(self, chunk: bytes) -> bytes:
        data = self._replace(self._held + chunk)
        keep = self._partial_tail(data)
        self._held = data[len(data) - keep:] if keep else b""
        return data[:len(data) - keep]

    def end(self) -> bytes:
        held, self._held = self._held, b""
        return held

    def _replace(self, data: bytes) -> bytes:
        for path, name in self._forms:
            data = data.replace(path, name)
        return data

    def _partial_tail(self, data: bytes) -> int:
        """How many bytes at the end of ``data`` could be the start of a path the next chunk completes."""
        longest = max((len(path) for path, _ in self._forms), default=0)
        for size in range(min(len(data), longest - 1), 0, -1):
            tail = data[-size:]
            if any(path.startswith(tail) for path, _ in self._forms):
                return size
        return 0
