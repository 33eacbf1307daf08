"""A tiny forward HTTP proxy on loopback that counts what passes through it: a client configured with it sends
"GET http://host:port/path" (the absolute form) and the proxy repeats the request to that host, streaming the answer
back (status, headers, body) without following redirects. Plain http only (the fake Hub and ModelScope are)."""

from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

_HOP = {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "transfer-encoding", "te", "upgrade"}


class FakeProxy:
    """``with FakeProxy() as proxy: HubAccess(..., proxy=proxy.url); proxy.urls`` lists the URLs it forwarded."""

    def __init__(self) -> None:
        self.urls: list[str] = []
        self.authorizations: list[str | None] = []  # Proxy-Authorization of each request
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-proxy", daemon=True)

    def __enter__(self) -> FakeProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        from app.core.hub.http import close_proxied

        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
        close_proxied()

    def record(self, url: str, authorization: str | None) -> None:
        with self._lock:
            self.urls.append(url)
            self.authorizations.append(authorization)


def _handler(proxy: FakeProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 10

        def log_message(self, format, *args) -> None:
            pass

        def do_GET(self) -> None:
            self._forward()

        def do_HEAD(self) -> None:
            self._forward()

        def _forward(self) -> None:
            proxy.record(self.path, self.headers.get("Proxy-Authorization"))
            target = urlsplit(self.path)
            if target.scheme != "http" or not target.hostname:
                self.send_error(400, "absolute http URL expected")
                return
            upstream = http.client.HTTPConnection(target.hostname, target.port or 80, timeout=30)
            path = target.path + (f"?{target.query}" if target.query else "")
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
            try:
                upstream.request(self.command, path, headers=headers)
                answer = upstream.getresponse()
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in _HOP:
                        self.send_header(key, value)
                self.end_headers()
                if self.command != "HEAD":
                    while chunk := answer.read(1 << 16):
                        self.wfile.write(chunk)
            except (OSError, http.client.HTTPException):
                self.close_connection = True
            finally:
                upstream.close()

    return Handler
