"""One streaming HTTP request that another thread can stop at any moment.

A stream gets its own connection so that ``stop()`` can shut its socket down: that wakes a reader blocked
in ``recv`` (even while the server is still reading the prompt, before the first byte) and tells the server
the client is gone, so llama.cpp frees the slot and the next request starts at once.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urlsplit

import httpcore


class _RecordingBackend(httpcore.NetworkBackend):
    """Opens sockets like httpcore's own backend and remembers the last one."""

    def __init__(self, owner: StoppableStream) -> None:
        self._inner = httpcore.SyncBackend()
        self._owner = owner
        self.stream: httpcore.NetworkStream | None = None

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        self.stream = self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        if self._owner.stopped:  # stop() came while we were connecting
            self._owner.stop()
        return self.stream

    def connect_unix_socket(self, path, timeout=None, socket_options=None):  # pragma: no cover - not used
        self.stream = self._inner.connect_unix_socket(path, timeout, socket_options)
        return self.stream

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class StoppableStream:
    """POST a JSON body and read the reply line by line; ``stop()`` is safe from any thread."""

    def __init__(self, url: str, headers: dict[str, str], body: dict[str, Any], *,
                 connect_timeout: float, read_timeout: float):
        parts = urlsplit(url)
        default_port = 443 if parts.scheme == "https" else 80
        origin = httpcore.Origin(parts.scheme.encode(), (parts.hostname or "").encode(), parts.port or default_port)
        self._backend = _RecordingBackend(self)
        self._connection = httpcore.HTTPConnection(origin, network_backend=self._backend)
        self._url = url
        self._headers = [(k.encode(), v.encode()) for k, v in headers.items()]
        self._content = json.dumps(body).encode()
        self._timeouts = {"connect": connect_timeout, "read": read_timeout, "write": connect_timeout,
                          "pool": connect_timeout}
        self._response: httpcore.Response | None = None
        self._lock = threading.Lock()
        self.stopped = False

    def open(self) -> tuple[int, dict[str, str]]:
        """Send the request and wait for the status line; returns (status, headers)."""
        headers = self._headers + [(b"Host", urlsplit(self._url).netloc.encode()),
                                   (b"Content-Type", b"application/json"),
                                   (b"Content-Length", str(len(self._content)).encode())]
        request = httpcore.Request("POST", self._url, headers=headers, content=self._content,
                                   extensions={"timeout": self._timeouts})
        response = self._connection.handle_request(request)
        with self._lock:
            self._response = response
        if self.stopped:
            self.close()
        return response.status, {k.decode().lower(): v.decode("latin-1") for k, v in response.headers}

    def _chunks(self) -> Iterable[bytes]:
        """The open response's body as it arrives (a sync connection's stream: never an async one)."""
        assert self._response is not None
        stream = self._response.stream
        assert isinstance(stream, Iterable)
        return stream

    def read_body(self, limit: int = 64 * 1024) -> bytes:
        """The whole (error) body, up to ``limit`` bytes."""
        data = bytearray()
        for chunk in self._chunks():
            data += chunk
            if len(data) >= limit:
                break
        return bytes(data[:limit])

    def iter_lines(self) -> Iterator[str]:
        """Decoded lines without their endings; a trailing partial line is yielded at EOF."""
        buffer = b""
        for chunk in self._chunks():
            buffer += chunk
            if b"\n" not in chunk:
                continue
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                yield line.rstrip(b"\r").decode("utf-8", "replace")
        if buffer:
            yield buffer.rstrip(b"\r").decode("utf-8", "replace")

    def stop(self) -> None:
        """Abort: wake the reading thread and drop the connection (the server frees its slot)."""
        self.stopped = True
        stream = self._backend.stream
        if stream is not None:
            sock = stream.get_extra_info("socket")
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        with self._lock:
            response, self._response = self._response, None
        try:
            if response is not None:
                response.close()
        except (httpcore.NetworkError, httpcore.ProtocolError, OSError):
            pass
        try:
            self._connection.close()
        except (httpcore.NetworkError, httpcore.ProtocolError, OSError):
            pass
