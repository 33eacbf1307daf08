"""A bounded cursor over an untrusted file.

Every count and length read from the file is checked against the bytes that remain before it is
trusted, nothing is allocated from an unchecked number, and large arrays are skipped (fixed-size
items by seeking, strings by walking their lengths in a reused window) instead of materialised.
"""

from __future__ import annotations

import struct
from typing import BinaryIO

from app.core.gguf.errors import GGUFError
from app.core.text import T

WINDOW = 1 << 20  # bytes read at a time; bounds memory whatever the file says
MAX_STRING = 1 << 30  # llama.cpp's GGUF_MAX_STRING_LENGTH
MAX_ARRAY = 1 << 30  # llama.cpp's GGUF_MAX_ARRAY_ELEMENTS


def truncated(what: str, offset: int) -> GGUFError:
    return GGUFError(
        T(
            "The file ends in the middle of its {what} (at byte {offset}): it is truncated or damaged.",
            "文件在{what}中间（第 {offset} 字节）就结束了：文件不完整或已损坏。",
            what=what,
            offset=offset,
        ),
        T("Download the file again; the copy you have is incomplete.", "请重新下载该文件；当前副本不完整。"),
        check_id="truncation",
        offset=offset,
    )


def malformed(en: str, zh: str, offset: int, **params: object) -> GGUFError:
    return GGUFError(
        T(en, zh, **params),
        T(
            "The file is damaged or was not written correctly; download it again or pick another file.",
            "文件已损坏或写入不正确；请重新下载或选择其他文件。",
        ),
        check_id="structure",
        offset=offset,
    )


class Cursor:
    """Reads little- or big-endian values from ``stream`` (``size`` bytes long) with bounds checks."""

    def __init__(self, stream: BinaryIO, size: int) -> None:
        self._stream = stream
        self.size = size
        self.pos = 0
        self._buf = b""
        self._buf_start = 0
        self.set_endian(big=False)

    def set_endian(self, big: bool) -> None:
        self.big_endian = big
        order = ">" if big else "<"
        self._structs = {c: struct.Struct(order + c) for c in "BbHhIiQqfd?"}

    @property
    def remaining(self) -> int:
        return self.size - self.pos

    def need(self, n: int, what: str) -> None:
        if n < 0 or n > self.remaining:
            raise truncated(what, self.pos)

    def _window(self, n: int, what: str) -> tuple[bytes, int]:
        """The buffer and the index of ``pos`` in it, holding at least ``n`` bytes (n already checked)."""
        start = self._buf_start
        if self.pos < start or self.pos + n > start + len(self._buf):
            want = min(max(n, WINDOW), self.remaining)
            try:
                self._stream.seek(self.pos)
                self._buf = self._stream.read(want)
            except OSError as exc:
                raise GGUFError(
                    T("Reading the file failed: {error}", "读取文件失败：{error}", error=str(exc)),
                    T("Check that the drive is still connected and readable.", "请检查磁盘是否仍然连接且可读。"),
                    check_id="path",
                    offset=self.pos,
                ) from exc
            self._buf_start = self.pos
            if len(self._buf) < n:  # the file shrank while we read it
                raise truncated(what, self.pos + len(self._buf))
        return self._buf, self.pos - self._buf_start

    def scalar(self, code: str, what: str):
        st = self._structs[code]
        self.need(st.size, what)
        buf, i = self._window(st.size, what)
        self.pos += st.size
        return st.unpack_from(buf, i)[0]

    def u32(self, what: str) -> int:
        return self.scalar("I", what)

    def u64(self, what: str) -> int:
        return self.scalar("Q", what)

    def raw(self, n: int, what: str) -> bytes:
        self.need(n, what)
        buf, i = self._window(n, what)
        self.pos += n
        return buf[i : i + n]

    def skip(self, n: int, what: str) -> None:
        self.need(n, what)
        self.pos += n

    def string_length(self, what: str) -> int:
        n = self.u64(what)
        if n > MAX_STRING:
            raise malformed(
                "A text field ({what}) claims {n} bytes, more than llama.cpp allows (1 GiB).",
                "一个文本字段（{what}）声称有 {n} 字节，超出 llama.cpp 允许的上限（1 GiB）。",
                self.pos - 8,
                what=what,
                n=n,
            )
        self.need(n, what)
        return n

    def string(self, what: str, keep_up_to: int = MAX_STRING) -> tuple[str | None, int]:
        """(text, byte length); text is None when longer than ``keep_up_to`` (then it is skipped)."""
        n = self.string_length(what)
        if n > keep_up_to:
            self.pos += n
            return None, n
        return self.raw(n, what).decode("utf-8", errors="replace"), n

    def skip_strings(self, count: int, what: str) -> None:
        """Skip ``count`` length-prefixed strings without building them (152k tokens in ~20 ms)."""
        self.need(8 * count, what)  # every string has at least its 8-byte length
        done = 0
        while done < count:
            buf, p = self._window(8, what)
            p, walked = _walk_strings(buf, p, count - done, self._structs["Q"].unpack_from)
            done += walked
            self.pos = self._buf_start + p
            if done < count:  # a string that crosses the window edge, or a huge one
                self.skip(self.string_length(what), what)
                done += 1


def _walk_strings(buf: bytes, p: int, count: int, unpack) -> tuple[int, int]:
    """(position, strings walked) after up to ``count`` strings lying wholly inside ``buf``.

    The hot loop of the reader: a for-range loop with the buffer-end test left to struct.error
    runs twice as fast as a while loop with explicit bounds tests.
    """
    end = len(buf)
    done = 0
    try:
        for done in range(count):
            q = p + 8 + unpack(buf, p)[0]
            if q > end:
                return p, done
            p = q
    except struct.error:  # fewer than 8 bytes left in the window
        return p, done
    return p, count
