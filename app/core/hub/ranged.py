"""A GGUF header read over HTTP: a read-only stream that fetches the start of a remote file with Range requests,
growing the range (doubling) while the reader needs more, and counting the bytes it received.

The bounded reader (app.core.gguf.stream_reader) asks for a window of up to 1 MiB at a time; the stream keeps one
prefix of the file in memory, so a header of a few MB (a 150k-token vocabulary) costs a handful of requests and at
most about twice its size.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

from app.core.hub.errors import HubError, bad_answer, hub_error
from app.core.hub.source import HubAccess
from app.core.text import T

logger = logging.getLogger(__name__)

FIRST_RANGE = 2 << 20  # covers the header of most models (and the reader's first 1 MiB window) in one request
MAX_HEADER = 128 << 20  # a header claiming more is not read further (the largest real ones are ~10 MB)
_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")

Fetch = Callable[[int, int], tuple[bytes, int | None]]  # (start, end inclusive) -> (body, total size if told)


@dataclass
class ReadCount:
    bytes: int = 0
    requests: int = 0


class RangedStream:
    """``seek``/``read`` over the first bytes of a remote file of ``size`` bytes (what the GGUF cursor uses)."""

    def __init__(self, fetch: Fetch, size: int, first: bytes, count: ReadCount) -> None:
        self._fetch = fetch
        self.size = size
        self._buf = bytearray(first)
        self._pos = 0
        self.count = count

    def seek(self, pos: int, whence: int = 0) -> int:
        self._pos = pos if whence == 0 else (self._pos + pos if whence == 1 else self.size + pos)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def read(self, n: int = -1) -> bytes:
        end = self.size if n < 0 else min(self._pos + n, self.size)
        if end > len(self._buf):
            self._grow(end)
        data = bytes(self._buf[self._pos:end])
        self._pos += len(data)
        return data

    def _grow(self, end: int) -> None:
        target = min(self.size, max(end, 2 * len(self._buf)))
        if target > MAX_HEADER:
            raise HubError(T("The file's header is larger than {mib} MiB, so the app does not read it before a "
                             "download.", "该文件的文件头超过 {mib} MiB，应用不会在下载前读取它。",
                             mib=MAX_HEADER >> 20),
                           T("Download the file to check it on this computer.", "请下载该文件后在本机检查。"))
        start = len(self._buf)
        body, _ = self._fetch(start, target - 1)
        self._buf += body


def http_fetch(url: str, access: HubAccess, count: ReadCount) -> Fetch:
    """A Range GET of ``url`` through the source's client (huggingface_hub's session, or the user's proxy; redirects
    followed) with the source's headers (the user's token only, as ModelScope's cookie there)."""

    def fetch(start: int, end: int) -> tuple[bytes, int | None]:
        from huggingface_hub.utils import hf_raise_for_status

        from app.core.hub.http import client, request_headers, timeout

        headers = request_headers(access) | {"Range": f"bytes={start}-{end}"}
        want = end - start + 1
        name = _file_name(url)
        try:
            with client(access).stream("GET", url, headers=headers, timeout=timeout(access)) as response:
                if response.status_code >= 400:
                    response.read()
                    hf_raise_for_status(response)
                if response.status_code != 206 and start > 0:
                    raise bad_answer(access, "the server sent the whole file instead of the part asked for")
                total = _total(response, start)
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk[: want - len(body)]
                    if len(body) >= want:
                        break  # a server that ignored Range sends the whole file: stop at what was asked
        except Exception as error:  # hub_error re-raises what is not a Hub failure
            raise hub_error(error, access, name) from error
        count.bytes += len(body)
        count.requests += 1
        if len(body) < want and (total is None or start + len(body) < total):
            raise bad_answer(access, f"{len(body)} of {want} bytes")
        return bytes(body), total

    return fetch


def _file_name(url: str) -> str:
    """The file's name in a sentence: the URL's last part, or ModelScope's FilePath= (its URLs end in a query)."""
    from urllib.parse import parse_qs, urlsplit

    parts = urlsplit(url)
    path = (parse_qs(parts.query).get("FilePath") or [parts.path])[0]
    return path.rsplit("/", 1)[-1]


def _total(response, start: int) -> int | None:
    """The file's size from Content-Range (206), or Content-Length of a whole-file answer (200 from byte 0)."""
    if response.status_code == 206:
        match = _CONTENT_RANGE.match(response.headers.get("Content-Range", ""))
        if match and int(match.group(1)) == start and match.group(3) != "*":
            return int(match.group(3))
        return None
    if start == 0 and response.headers.get("Content-Length", "").isdigit():
        return int(response.headers["Content-Length"])
    return None


def open_remote(url: str, access: HubAccess, size_hint: int | None, count: ReadCount) -> RangedStream:
    """The stream over ``url``, after its first request (which also tells the file's size)."""
    fetch = http_fetch(url, access, count)
    first_end = (min(FIRST_RANGE, size_hint) if size_hint else FIRST_RANGE) - 1
    body, total = fetch(0, max(first_end, 0))
    size = total if total is not None else size_hint
    if size is None:
        raise bad_answer(access, "no file size")
    if size_hint is not None and total is not None and total != size_hint:
        logger.info("%s: the listing says %d bytes, the file has %d", url, size_hint, total)
    return RangedStream(fetch, size, body[:size], count)
