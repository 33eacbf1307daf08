"""A small reverse proxy that shares the supervised server with other devices: a key, and a limit instead of a queue.

llama-server has neither a request limit nor a polite "busy": every request beyond its slots waits, and on a shared
server they pile up until the clients' timeouts fire (field report 003: "the queue length needs a limit; beyond it
answer 429 at once instead of letting everyone time out"). So when sharing is on, the server stays on loopback and
this proxy listens on the address the user chose:

- every route but ``/health`` wants ``Authorization: Bearer <key>`` (401 otherwise, compared in constant time);
  a browser's CORS preflight (OPTIONS) is answered here and never forwarded;
- nothing of a body is read before the key is checked: a request without a key that carries one gets 413, and a
  keyed body is streamed to the server as it arrives, never held whole;
- a connection counts against the connection limit only once its head is complete and its key checked; until then
  it has a deadline for the whole head and a small budget per client address (the oldest waiting one is cut when a
  newcomer needs the place), so idle or slow-header connections cannot turn keyed requests away;
- at most ``max_active`` answers are generated at once (the server's slots); one more gets HTTP 429 with
  ``Retry-After`` (seconds, from how long recent answers took) and a sentence saying so;
- the answer passes through as it arrives (each chunk written and flushed): streamed tokens are not held back;
  the model's absolute path in it becomes its file name (``path_scrub``: the path holds the user's name);
- a client that goes away while its answer is being made (streamed or not) cancels it: once its request is read,
  its socket is watched for the close while the server works, and the connection to the server is then closed,
  which llama-server takes as a cancel (its slot frees at once, not after the whole answer);
- ``/health`` is answered here from the server's readiness (llama-server's own ``/health``; the built-in engine has
  none, so whether its ``/v1/models`` answers): ``{"status": "ok"}`` or 503.

Standard library threads and httpx only. ``close()`` stops listening, cuts open connections (upstream too, so the
server frees its slot) and joins every thread: no thread or port outlives it.
"""

from __future__ import annotations

import hmac
import json
import logging
import selectors
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from app.core.server.path_scrub import PathScrub
from app.core.server.request_limit import DEFAULT_RETRY_S, RequestLimit

logger = logging.getLogger(__name__)

PUBLIC_PATHS = frozenset({"/health", "/v1/health"})
UNLIMITED_POSTS = frozenset({"/tokenize", "/detokenize", "/apply-template", "/extras/tokenize",
                             "/extras/tokenize/count", "/extras/detokenize"})  # quick, no slot held
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                        "transfer-encoding", "upgrade", "host", "content-length", "authorization",
                        "accept-encoding"})  # the server answers uncompressed: the path in it can be rewritten
MAX_CONNECTIONS = 64  # beyond this many keyed connections a newcomer is told to retry, not given a thread to wait in
IDLE_READ_S = 30.0
HEAD_DEADLINE_S = 10.0  # for the whole request head: a header line every few seconds does not keep a place
MAX_WAITING_PER_ADDRESS = 16  # connections from one address whose head is not complete yet
MAX_WAITING = 256  # the same, all addresses together
MAX_BODY = 64 * 1024 * 1024
BODY_CHUNK = 64 * 1024
HEALTH_TIMEOUT_S = 5.0
LOADING_BODY = {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}  # llama-server's
CORS_PREFLIGHT = {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
                  "Access-Control-Allow-Headers": "Authorization, Content-Type", "Access-Control-Max-Age": "600"}


def _error_body(status: int, kind: str, message: str, **extra: object) -> bytes:
    """The error shape llama-server and OpenAI use, so every client already reads it."""
    return json.dumps({"error": {"code": status, "type": kind, "message": message, **extra}}).encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _ProxyServer
    timeout = IDLE_READ_S  # a connection that sends nothing does not hold a thread forever

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection, True, self.client_address[0])

    def parse_request(self) -> bool:
        try:
            return super().parse_request()
        finally:  # the head is complete (or refused): its deadline no longer applies
            self.server.head_done(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, False, self.client_address[0])

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
        if self.command == "OPTIONS":  # a browser's CORS preflight carries no key: answered here, nothing forwarded
            self._answer_preflight()
            return
        public = path in PUBLIC_PATHS
        if public and self._has_body():
            self.reply(413, _error_body(413, "invalid_request_error", "This address takes no request body."))
            return
        if not public and not self._key_ok():
            return
        if self.server.admit(self.connection) > MAX_CONNECTIONS:
            self._refuse_busy()
            return
        if not self.server.available():
            self.reply(502, _error_body(502, "unavailable_error", "The model on this computer is not running; "
                                        "whoever shares it has to start it."))
            return
        if public:
            self.reply(*self.server.health())
            return
        length = self._body_length()
        if length is None:
            return
        limited = self.command == "POST" and path not in UNLIMITED_POSTS
        ticket = self.server.limit.try_enter() if limited else 0
        if ticket is None:
            self._refuse_busy()
            return
        try:
            self.server.forward(self, length)
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
        at_a_time = "one request at a time and it is taken" if limit == 1 else \
            f"{limit} requests at a time and all are taken"
        message = f"The server is busy: it answers {at_a_time}. Retry in {seconds} s."
        self.reply(429, _error_body(429, "rate_limit_error", message, retry_after=seconds),
                   {"Retry-After": str(seconds)})

    def _answer_preflight(self) -> None:
        self.send_response(204)
        for name, value in CORS_PREFLIGHT.items():
            self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")
        self.end_headers()

    def _has_body(self) -> bool:
        return bool(self.headers.get("Transfer-Encoding")) or self.headers.get("Content-Length", "0").strip() != "0"

    def _body_length(self) -> int | None:
        """The body's length, read from the head only (the body itself is streamed later)."""
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
        return length

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
    request_queue_size = 128  # a burst of connections waits to be accepted instead of having its SYNs dropped

    def __init__(self, address: tuple[str, int], upstream: Callable[[], str], api_key: str, limit: RequestLimit,
                 upstream_key: Callable[[], str | None], available: Callable[[], bool], *, health_path: str = "/health",
                 private_paths: Callable[[], list[str]] = list):
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        super().__init__(address, _Handler)
        self.upstream, self.api_key, self.limit, self.upstream_key = upstream, api_key, limit, upstream_key
        self.available, self.health_path, self.private_paths = available, health_path, private_paths
        # no connection kept for the next request: each request's own connection is the one to close to cancel it
        self.http = httpx.Client(timeout=httpx.Timeout(3600.0, connect=5.0),
                                 limits=httpx.Limits(max_keepalive_connections=0))
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._waiting: dict[socket.socket, tuple[str, float]] = {}  # head not complete yet: address, accepted at
        self._admitted: set[socket.socket] = set()
        self._flights: set[_Flight] = set()
        self.closing = False

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    @property
    def waiting_count(self) -> int:
        return len(self._waiting)

    def track(self, connection: socket.socket, add: bool, address: str) -> None:
        evicted: list[socket.socket] = []
        with self._lock:
            if add:
                evicted = self._make_room(address)
                self._connections.add(connection)
                self._waiting[connection] = (address, time.monotonic())
            else:
                self._connections.discard(connection)
                self._waiting.pop(connection, None)
                self._admitted.discard(connection)
        for sock in evicted:
            logger.debug("share %s: a connection that had not sent its request yet was cut for a newcomer", address)
            _cut(sock)
        if add and self.closing:
            _cut(connection)

    def _make_room(self, address: str) -> list[socket.socket]:
        """The oldest waiting connections to cut so that a newcomer from ``address`` fits both budgets."""
        oldest_first = sorted(self._waiting.items(), key=lambda item: item[1][1])
        same = [sock for sock, (addr, _) in oldest_first if addr == address]
        evicted = same[:max(0, len(same) - MAX_WAITING_PER_ADDRESS + 1)]
        others = [sock for sock, _ in oldest_first if sock not in evicted]
        evicted += others[:max(0, len(others) - MAX_WAITING + 1)]
        for sock in evicted:
            self._waiting.pop(sock)
        return evicted

    def head_done(self, connection: socket.socket) -> None:
        with self._lock:
            self._waiting.pop(connection, None)

    def admit(self, connection: socket.socket) -> int:
        """Count a connection whose key was checked; how many such connections are open now."""
        with self._lock:
            self._admitted.add(connection)
            return len(self._admitted)

    def service_actions(self) -> None:
        """Called by serve_forever between polls (every 0.2 s at most): cut connections whose head missed its
        deadline, and cancel the requests whose client went away."""
        self._cut_late_heads()
        self._watch_clients()

    def _cut_late_heads(self) -> None:
        now = time.monotonic()
        with self._lock:
            late = [sock for sock, (_, since) in self._waiting.items() if now - since > HEAD_DEADLINE_S]
            for sock in late:
                del self._waiting[sock]
        for sock in late:
            _cut(sock)
        if late:
            logger.info("share: %d connection(s) cut: no complete request within %.0f s", len(late), HEAD_DEADLINE_S)

    def _watch_clients(self) -> None:
        """A client whose request is read and whose socket then reads as closed (or reset) has gone away."""
        with self._lock:
            flights = [flight for flight in self._flights if flight.watching and not flight.gone]
        if not flights:
            return
        with selectors.DefaultSelector() as selector:
            for flight in flights:
                try:
                    selector.register(flight.client, selectors.EVENT_READ, flight)
                except (ValueError, OSError):  # closed meanwhile: its request has ended
                    continue
            ready = [key.data for key, _ in selector.select(0)]
        for flight in ready:
            try:
                more = flight.client.recv(1, socket.MSG_PEEK)
            except (TimeoutError, BlockingIOError):
                continue
            except OSError:  # reset by the client
                more = b""
            if more:  # it sent something after its request (pipelining): not a goodbye, and not watched further
                flight.watching = False
                continue
            logger.info("share %s: the client went away before its answer was complete; the answer is cancelled",
                        flight.address)
            flight.cancel()

    def health(self) -> tuple[int, bytes]:
        """``/health`` for the clients: 200 ``{"status": "ok"}`` once the server answers, else 503 (loading)."""
        key = self.upstream_key()
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        try:
            answer = self.http.get(self.upstream().rstrip("/") + self.health_path, headers=headers,
                                   timeout=HEALTH_TIMEOUT_S)
        except httpx.HTTPError as exc:
            logger.debug("share: health check got no answer (%s)", type(exc).__name__)
            answer = None
        if answer is not None and answer.status_code == 200:
            return 200, json.dumps({"status": "ok"}).encode()
        return 503, json.dumps(LOADING_BODY).encode()

    def forward(self, handler: _Handler, length: int) -> None:
        flight = _Flight(handler.connection, handler.client_address[0])
        body = _body_chunks(handler.rfile, length, flight.watch) if length else b""
        if not length:
            flight.watch()
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in HOP_BY_HOP}
        headers["Accept-Encoding"] = "identity"
        if length:  # an explicit length: httpx then streams the body as it is, not in chunked framing
            headers["Content-Length"] = str(length)
        key = self.upstream_key()  # read per request: the server's key can change with a restart
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = self.http.build_request(handler.command, self.upstream().rstrip("/") + handler.path,
                                          headers=headers, content=body, extensions={"trace": flight.on_trace})
        with self._lock:
            self._flights.add(flight)
        try:
            self._send(handler, request, flight)
        finally:
            with self._lock:
                self._flights.discard(flight)

    def _send(self, handler: _Handler, request: httpx.Request, flight: _Flight) -> None:
        try:
            response = self.http.send(request, stream=True)
        except httpx.HTTPError as exc:
            if flight.gone:  # cancelled for a client that left: nobody to answer
                return
            logger.info("share: the model server did not answer (%s)", type(exc).__name__)
            handler.reply(503, _error_body(503, "unavailable_error", "The model server is starting or restarting."),
                          {"Retry-After": str(DEFAULT_RETRY_S)})
            return
        except OSError as exc:  # the client stopped sending its body: nothing to answer it with
            logger.debug("share: client gone mid-request (%s)", exc)
            return
        try:
            _pass_through(handler, response, PathScrub(self.private_paths()))
        except OSError as exc:  # the client went away: closing the upstream answer frees the server's slot
            logger.debug("share: client gone mid-answer (%s)", exc)
        except httpx.HTTPError as exc:
            if not flight.gone:
                logger.info("share: the model server's answer broke off (%s)", type(exc).__name__)
        finally:
            response.close()

    def cut_everything(self) -> None:
        """Wake every thread blocked on a socket: the clients' and those of the requests to the server."""
        self.closing = True
        with self._lock:
            connections, flights = list(self._connections), list(self._flights)
        for connection in connections:
            _cut(connection)
        for flight in flights:
            flight.cancel()


class _Flight:
    """One request on its way to the server: the client's socket (watched once the request is read) and the
    connection to the server, closed to cancel the answer when the client goes away."""

    def __init__(self, client: socket.socket, address: str):
        self.client, self.address = client, address
        self.watching = False
        self.gone = False
        self._upstream: socket.socket | None = None
        self._lock = threading.Lock()

    def watch(self) -> None:
        """The whole request is read: from now on anything the client's socket reads is its goodbye."""
        self.watching = True

    def on_trace(self, event: str, info: dict) -> None:
        """httpcore's trace: the connection to the server, once made."""
        if event != "connection.connect_tcp.complete":
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        with self._lock:
            self._upstream = sock
            gone = self.gone
        if gone and sock is not None:
            _cut(sock)

    def cancel(self) -> None:
        with self._lock:
            self.gone = True
            sock = self._upstream
        if sock is not None:
            _cut(sock)


def _cut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _body_chunks(rfile, length: int, done: Callable[[], None]) -> Iterator[bytes]:
    """The request body as it arrives, a chunk at a time; a client that stops short ends the request. ``done()``
    once it is all read."""
    left = length
    while left:
        chunk = rfile.read(min(BODY_CHUNK, left))
        if not chunk:
            raise OSError("the client stopped before the end of its request body")
        left -= len(chunk)
        if not left:
            done()
        yield chunk


def _pass_through(handler: _Handler, response: httpx.Response, scrub: PathScrub) -> None:
    """Status, headers, then the body chunk by chunk as it arrives (chunked encoding), each chunk flushed and
    rewritten by ``scrub`` (unless the server compressed it, which it does not when asked for identity)."""
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
    rewrite = scrub.active and response.headers.get("Content-Encoding", "identity") == "identity"
    for chunk in response.iter_raw():
        _write_chunk(handler, scrub.feed(chunk) if rewrite else chunk)
    if rewrite:
        _write_chunk(handler, scrub.end())
    handler.wfile.write(b"0\r\n\r\n")
    handler.wfile.flush()


def _write_chunk(handler: _Handler, chunk: bytes) -> None:
    if chunk:
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        handler.wfile.flush()


class ShareProxy:
    """Listen on ``host:port`` (0: any free port) and pass requests with the key to ``upstream()``'s server."""

    def __init__(self, upstream: str | Callable[[], str], *, api_key: str, host: str = "127.0.0.1", port: int = 0,
                 max_active: int = 1, upstream_key: str | None | Callable[[], str | None] = None,
                 available: Callable[[], bool] | None = None,
                 health_path: str = "/health", private_paths: Callable[[], list[str]] = list):
        """``available()``: whether the server is running or on its way (else a request gets 502 at once, not a
        503 that clients would wait on). ``health_path``: the server's route that answers 200 once it is ready.
        ``private_paths()``: the files (the model's) whose absolute path answers must not carry."""
        if not api_key:
            raise ValueError("a shared server needs an API key")
        self._upstream = upstream if callable(upstream) else (lambda: upstream)
        self.host, self.port, self.api_key = host, port, api_key
        self.upstream_key = upstream_key if callable(upstream_key) else (lambda: upstream_key)
        self.limit = RequestLimit(max_active)
        self._available = available or (lambda: True)
        self.health_path, self.private_paths = health_path, private_paths
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
        server = _ProxyServer((self.host.strip("[]"), self.port), self._upstream, self.api_key, self.limit,
                              self.upstream_key, self._available, health_path=self.health_path,
                              private_paths=self.private_paths)
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                                        name=f"share-proxy-{self.bound_port}", daemon=True)
        self._thread.start()
        logger.info("sharing on %s port %s, at most %d answers at once", self.host, self.bound_port,
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
