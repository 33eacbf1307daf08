"""A small reverse proxy that shares the supervised server with other devices: a key, and a limit instead of a queue.

llama-server has neither a request limit nor a polite "busy": every request beyond its slots waits, and on a shared
server they pile up until the clients' timeouts fire (field report 003: "the queue length needs a limit; beyond it
answer 429 at once instead of letting everyone time out"). So when sharing is on, the server stays on loopback and
this proxy listens on the address the user chose:

- every route but ``/health`` wants ``Authorization: Bearer <key>`` (401 otherwise, compared in constant time);
- at most ``max_active`` answers are generated at once (the server's slots); one more gets HTTP 429 with
  ``Retry-After`` (seconds, from how long recent answers took) and a sentence saying so;
- the answer passes through as it arrives (each chunk written and flushed): streamed tokens are not held back.

Standard library threads and httpx only. ``close()`` stops listening, cuts open connections (upstream too, so the
server frees its slot) and joins every thread: no thread or port outlives it.
"""

from __future__ import annotations

import hmac
import json
import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

import httpx

from app.core.server.request_limit import DEFAULT_RETRY_S, RequestLimit

logger = logging.getLogger(__name__)

PUBLIC_PATHS = frozenset({"/health", "/v1/health"})
UNLIMITED_POSTS = frozenset({"/tokenize", "/detokenize", "/apply-template", "/extras/tokenize",
                             "/extras/tokenize/count", "/extras/detokenize"})  # quick, no slot held
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                        "transfer-encoding", "upgrade", "host", "content-length", "authorization"})
MAX_CONNECTIONS = 64  # beyond this many open connections a newcomer is told to retry, not given a thread to wait in
IDLE_READ_S = 30.0
MAX_BODY = 64 * 1024 * 1024


def _error_body(status: int, kind: str, message: str, **extra: object) -> bytes:
    """The error shape llama-server and OpenAI use, so every client already reads it."""
    return json.dumps({"error": {"code": status, "type": kind, "message": message, **extra}}).encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _ProxyServer
    timeout = IDLE_READ_S  # a connection that sends nothing does not hold a thread forever

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, False)

    def log_message(self, format: str, *args: object) -> None:
        logger.debug("share %s: " + format, self.client_address[0], *args)  # never headers: they hold the key

    def do_GET(self) -> None:
        self._proxy()

    do_POST = do_PUT = do_DELETE = do_OPTIONS = do_HEAD = do_GET

    def _proxy(self) -> None:
        self.close_connection = True  # one request per connection: nothing idles between requests
        path = self.path.split("?", 1)[0]
        if not path.startswith("/"):  # an absolute URL would send the request somewhere else
            self.reply(400, _error_body(400, "invalid_request_error", "Ask for a path, like /v1/models."))
            return
        # a browser's CORS preflight carries no key (llama-server lets it pass too); it generates nothing
        if path not in PUBLIC_PATHS and self.command != "OPTIONS" and not self._key_ok():
            return
        if self.server.connection_count > MAX_CONNECTIONS:
            self._refuse_busy()
            return
        if not self.server.available():
            self.reply(502, _error_body(502, "unavailable_error", "The model on this computer is not running; "
                                        "whoever shares it has to start it."))
            return
        body = self._read_body()
        if body is None:
            return
        limited = self.command == "POST" and path not in UNLIMITED_POSTS
        ticket = self.server.limit.try_enter() if limited else 0
        if ticket is None:
            self._refuse_busy()
            return
        try:
            self.server.forward(self, body)
        finally:
            if limited:
                self.server.limit.leave(ticket)

    def _key_ok(self) -> bool:
        given = self.headers.get("Authorization", "")
        scheme, _, token = given.partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), self.server.api_key.encode()):
            return True
        message = "Invalid API Key" if given else "This server wants an API key (Authorization: Bearer <key>)."
        self.reply(401, _error_body(401, "authentication_error", message))
        return False

    def _refuse_busy(self) -> None:
        seconds = self.server.limit.retry_after_s()
        limit = self.server.limit.max_active
        message = (f"The server is busy: it answers {limit} request(s) at a time and all are taken. "
                   f"Retry in {seconds} s.")
        self.reply(429, _error_body(429, "rate_limit_error", message, retry_after=seconds),
                   {"Retry-After": str(seconds)})

    def _read_body(self) -> bytes | None:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.reply(411, _error_body(411, "invalid_request_error", "Send the request with a Content-Length."))
            return None
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            self.reply(400, _error_body(400, "invalid_request_error", "Bad Content-Length."))
            return None
        return self.rfile.read(length) if length else b""

    def reply(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = False  # joined by server_close(): no handler thread outlives close()
    block_on_close = True

    def __init__(self, address: tuple[str, int], upstream: Callable[[], str], api_key: str, limit: RequestLimit,
                 upstream_key: str | None, available: Callable[[], bool]):
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        super().__init__(address, _Handler)
        self.upstream, self.api_key, self.limit, self.upstream_key = upstream, api_key, limit, upstream_key
        self.available = available
        self.http = httpx.Client(timeout=httpx.Timeout(3600.0, connect=5.0))
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._streams: set[httpx.Response] = set()
        self.closing = False

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    def track(self, connection: socket.socket, add: bool) -> None:
        with self._lock:
            (self._connections.add if add else self._connections.discard)(connection)
        if add and self.closing:
            _cut(connection)

    def forward(self, handler: _Handler, body: bytes) -> None:
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in HOP_BY_HOP}
        if self.upstream_key:
            headers["Authorization"] = f"Bearer {self.upstream_key}"
        request = self.http.build_request(handler.command, self.upstream().rstrip("/") + handler.path,
                                          headers=headers, content=body)
        try:
            response = self.http.send(request, stream=True)
        except httpx.HTTPError as exc:
            logger.info("share: the model server did not answer (%s)", type(exc).__name__)
            handler.reply(503, _error_body(503, "unavailable_error", "The model server is starting or restarting."),
                          {"Retry-After": str(DEFAULT_RETRY_S)})
            return
        with self._lock:
            self._streams.add(response)
        try:
            _pass_through(handler, response)
        except OSError as exc:  # the client went away: closing the upstream answer frees the server's slot
            logger.debug("share: client gone mid-answer (%s)", exc)
        except httpx.HTTPError as exc:
            logger.info("share: the model server's answer broke off (%s)", type(exc).__name__)
        finally:
            with self._lock:
                self._streams.discard(response)
            response.close()

    def cut_everything(self) -> None:
        """Wake every thread blocked on a socket: the clients' and the upstream answers'."""
        self.closing = True
        with self._lock:
            connections, streams = list(self._connections), list(self._streams)
        for connection in connections:
            _cut(connection)
        for response in streams:
            stream = response.extensions.get("network_stream")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if sock is not None:
                _cut(sock)


def _cut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _pass_through(handler: _Handler, response: httpx.Response) -> None:
    """Status, headers, then the body chunk by chunk as it arrives (chunked encoding), each chunk flushed."""
    handler.send_response(response.status_code)
    for name, value in response.headers.multi_items():
        if name.lower() not in HOP_BY_HOP:
            handler.send_header(name, value)
    bodiless = handler.command == "HEAD" or response.status_code in (204, 304) or response.status_code < 200
    if bodiless:  # no body, so no chunk framing either
        handler.send_header("Connection", "close")
        handler.end_headers()
        return
    handler.send_header("Transfer-Encoding", "chunked")
    handler.send_header("Connection", "close")
    handler.end_headers()
    for chunk in response.iter_raw():
        if chunk:
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            handler.wfile.flush()
    handler.wfile.write(b"0\r\n\r\n")
    handler.wfile.flush()


class ShareProxy:
    """Listen on ``host:port`` (0: any free port) and pass requests with the key to ``upstream()``'s server."""

    def __init__(self, upstream: str | Callable[[], str], *, api_key: str, host: str = "127.0.0.1", port: int = 0,
                 max_active: int = 1, upstream_key: str | None = None, available: Callable[[], bool] | None = None):
        """``available()``: whether the server is running or on its way (else a request gets 502 at once, not a
        503 that clients would wait on)."""
        if not api_key:
            raise ValueError("a shared server needs an API key")
        self._upstream = upstream if callable(upstream) else (lambda: upstream)
        self.host, self.port, self.api_key, self.upstream_key = host, port, api_key, upstream_key
        self.limit = RequestLimit(max_active)
        self._available = available or (lambda: True)
        self._server: _ProxyServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def bound_port(self) -> int | None:
        return int(self._server.server_address[1]) if self._server is not None else None

    def start(self) -> None:
        """Bind and serve; OSError when the address cannot be used (taken, not this computer's)."""
        if self._server is not None:
            return
        server = _ProxyServer((self.host, self.port), self._upstream, self.api_key, self.limit, self.upstream_key,
                              self._available)
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                                        name=f"share-proxy-{self.bound_port}", daemon=True)
        self._thread.start()
        logger.info("sharing on %s:%s, at most %d answer(s) at once", self.host, self.bound_port,
                    self.limit.max_active)

    def close(self) -> None:
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is None:
            return
        server.shutdown()  # serve_forever returns: no new connections are taken
        server.cut_everything()
        server.server_close()  # joins the handler threads (each ends once its sockets are cut)
        server.http.close()
        if thread is not None:
            thread.join(5.0)
        logger.info("sharing stopped")
