"""A loopback stand-in for the Hugging Face Hub: a real threaded HTTP server on 127.0.0.1 serving real GGUF files
from disk, spoken to by the real huggingface_hub client (``endpoint=`` / ``HF_ENDPOINT``).

Endpoints and the answers' shapes, checked against huggingface_hub 2.4.0's own parsing code:
- ``GET /api/models?search=&filter=&sort=&limit=``: a JSON list of model entries (hf_api.HfApi.list_models ->
  hf_api.ModelInfo(**item): id, downloads, likes, tags, private, ...; "siblings" only when asked).
- ``GET /api/models/{repo}[/revision/{rev}][?blobs=true]``: one entry with ``sha``, ``gated`` and ``siblings``
  [{rfilename, size, blobId, lfs: {sha256, size, pointerSize}}] (HfApi.model_info -> ModelInfo.__init__; sizes and
  LFS only with blobs=true, as the Hub does).
- ``GET /api/models/{repo}/tree/{rev}[?recursive=&expand=]``: [{type: "file", oid, size, path, lfs: {oid, size,
  pointerSize}, lastCommit (expand)}] (HfApi.list_repo_tree -> _iter_repo_tree_pages -> RepoFile.__init__).
- ``HEAD|GET /{repo}/resolve/{rev}/{file}``: an LFS file answers 302 to a "CDN" on another host name (localhost)
  with ``X-Repo-Commit``, ``X-Linked-Etag`` (its sha256), ``X-Linked-Size``, ``ETag`` and ``Location``
  (file_download.get_hf_file_metadata reads them from the redirect, as _httpx2_follow_hub_redirects_with_backoff
  does not follow a redirect off the Hub's host); a small file answers 200 with ``ETag``, ``X-Repo-Commit`` and
  ``Content-Length``. ``Range: bytes=a-b`` / ``a-`` answers 206 with ``Content-Range``; ``Accept-Ranges: bytes``.
- Errors carry ``X-Error-Code`` / ``X-Error-Message`` as utils._http.hf_raise_for_status reads them: a gated file
  401 (no token) / 403 (a token that did not accept) ``GatedRepo``; a private repository 401 ``RepoNotFound``; a
  missing repository 404 ``RepoNotFound``; a missing file 404 ``EntryNotFound``.
- Faults for any path: a status (429 with ``Retry-After``) or a delay before answering (a slow mirror); for a
  file's bytes, a connection cut after some bytes of the body (the full ``Content-Length`` promised, the socket
  closed) and a body sent at a limited rate. ``times`` limits a fault to its first N matching requests.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

CDN_HOST = "localhost"  # another host name for the same server: huggingface_hub treats it as off the Hub


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass
class FakeRepo:
    repo: str
    files: dict[str, Path]  # path in the repository -> file on disk
    gated: bool = False
    private: bool = False
    allowed_tokens: tuple[str, ...] = ()  # tokens whose owner accepted the license / may read the private repo
    downloads: int = 0
    sha: str = ""
    lfs_min: int = 1024  # files at least this large are LFS (sha256 published), smaller ones plain git blobs
    hashes: dict[str, str] = field(default_factory=dict)  # computed on first use; a test may give them (a 5 GB hole)

    def __post_init__(self) -> None:
        self.sha = self.sha or hashlib.sha1(self.repo.encode()).hexdigest()

    def sha256(self, name: str) -> str:
        if name not in self.hashes:
            self.hashes[name] = _sha256(self.files[name])
        return self.hashes[name]

    def is_lfs(self, name: str) -> bool:
        return self.files[name].stat().st_size >= self.lfs_min

    def blob_id(self, name: str) -> str:
        return hashlib.sha1(f"{self.repo}/{name}".encode()).hexdigest()


@dataclass
class Fault:
    match: str  # a regular expression searched in the request path
    status: int | None = None
    retry_after: int | None = None
    delay_s: float = 0.0
    error_code: str | None = None
    times: int | None = None  # applies to the first N matching requests only (None: to all)
    cut_after: int | None = None  # a file's body: close the connection after this many bytes of it
    bytes_per_s: float | None = None  # a file's body: sent no faster than this (a slow mirror)
    hits: int = 0

    def take(self) -> bool:
        """Whether this fault applies to one more matching request (and count it)."""
        if self.times is not None and self.hits >= self.times:
            return False
        self.hits += 1
        return True


@dataclass
class Request:
    method: str
    path: str
    range: str | None
    authorization: str | None


class FakeHub:
    """``with FakeHub() as hub: hub.add(FakeRepo(...)); HubAccess(endpoint=hub.url)``."""

    def __init__(self) -> None:
        self.repos: dict[str, FakeRepo] = {}
        self.faults: list[Fault] = []
        self.requests: list[Request] = []
        self.body_bytes: dict[str, int] = {}  # file path in a repository -> bytes of its content sent
        self.ignore_range = False  # a server that answers every Range request with the whole file (200)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-hub", daemon=True)

    def __enter__(self) -> FakeHub:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        from huggingface_hub.utils import close_session

        self._stop.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
        close_session()  # the client's pooled connections to this server

    def add(self, repo: FakeRepo) -> FakeRepo:
        self.repos[repo.repo] = repo
        return repo

    def fault(self, match: str, **kwargs) -> Fault:
        fault = Fault(match, **kwargs)
        self.faults.append(fault)
        return fault

    def record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def take(self, fault: Fault) -> bool:
        with self._lock:
            return fault.take()

    def count_body(self, name: str, n: int) -> None:
        with self._lock:
            self.body_bytes[name] = self.body_bytes.get(name, 0) + n

    def wait(self, seconds: float) -> None:
        self._stop.wait(seconds)


_RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<file>.+)$")
_CDN = re.compile(r"^/cdn/(?P<repo>[^/]+/[^/]+)/(?P<file>.+)$")
_API_REPO = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+?)(?:/revision/(?P<rev>[^/]+))?$")
_API_TREE = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+)/tree/(?P<rev>[^/]+)$")
_RANGE = re.compile(r"^bytes=(\d+)-(\d*)$")


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 10  # a kept-alive connection nobody uses ends its thread

        def log_message(self, format, *args) -> None:
            pass

        def do_GET(self) -> None:
            self._serve(head=False)

        def do_HEAD(self) -> None:
            self._serve(head=True)

        # --- plumbing -------------------------------------------------------------------------------------------
        def _serve(self, head: bool) -> None:
            parts = urlsplit(self.path)
            path, query = unquote(parts.path), parse_qs(parts.query)
            hub.record(Request(self.command, self.path, self.headers.get("Range"),
                               self.headers.get("Authorization")))
            self.body_fault: Fault | None = None
            for fault in hub.faults:
                if re.search(fault.match, path) and hub.take(fault):
                    if fault.cut_after is not None or fault.bytes_per_s is not None:
                        self.body_fault = fault
                    if fault.delay_s:
                        hub.wait(fault.delay_s)
                    if fault.status is not None:
                        headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else {}
                        if fault.error_code:
                            headers["X-Error-Code"] = fault.error_code
                        return self._json(fault.status, {"error": "fault"}, head, headers)
            try:
                self._route(path, query, head)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _json(self, status: int, value, head: bool, headers: dict | None = None) -> None:
            body = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            for key, val in (headers or {}).items():
                self.send_header(key, val)
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def _error(self, status: int, code: str, message: str, head: bool) -> None:
            self._json(status, {"error": message}, head, {"X-Error-Code": code, "X-Error-Message": message})

        def _token(self) -> str | None:
            value = self.headers.get("Authorization") or ""
            return value[7:] if value.startswith("Bearer ") else None

        def _repo(self, name: str, head: bool) -> FakeRepo | None:
            repo = hub.repos.get(name)
            if repo is None:
                self._error(404, "RepoNotFound", "Repository not found", head)
                return None
            if repo.private and self._token() not in repo.allowed_tokens:
                self._error(401, "RepoNotFound", "Invalid username or password.", head)
                return None
            return repo

        # --- routes ---------------------------------------------------------------------------------------------
        def _route(self, path: str, query: dict, head: bool) -> None:
            if path == "/api/models":
                return self._search(query, head)
            for pattern, route in ((_API_TREE, self._tree), (_API_REPO, self._info), (_RESOLVE, self._resolve),
                                   (_CDN, self._cdn)):
                match = pattern.match(path)
                if match:
                    return route(match, query, head)
            self._error(404, "EntryNotFound", "Not found", head)

        def _entry(self, repo: FakeRepo) -> dict:
            return {"_id": repo.sha[:24], "id": repo.repo, "modelId": repo.repo, "likes": 0,
                    "downloads": repo.downloads, "private": repo.private, "gated": "auto" if repo.gated else False,
                    "tags": ["gguf"], "library_name": "gguf", "createdAt": "2026-11-30T00:00:00.000Z"}

        def _search(self, query: dict, head: bool) -> None:
            words = (query.get("search") or [""])[0].lower()
            wants_gguf = "gguf" in query.get("filter", [])
            found = [r for r in hub.repos.values() if words in r.repo.lower() and not r.private
                     and (not wants_gguf or any(n.endswith(".gguf") for n in r.files))]
            found.sort(key=lambda r: -r.downloads)
            limit = int((query.get("limit") or ["1000"])[0])
            self._json(200, [self._entry(r) for r in found[:limit]], head)

        def _info(self, match: re.Match, query: dict, head: bool) -> None:
            repo = self._repo(match["repo"], head)
            if repo is None:
                return
            blobs = (query.get("blobs") or ["false"])[0].lower() == "true"
            siblings = []
            for name, file in sorted(repo.files.items()):
                sibling: dict = {"rfilename": name}
                if blobs:
                    sibling |= {"size": file.stat().st_size, "blobId": repo.blob_id(name)}
                    if repo.is_lfs(name):
                        sibling["lfs"] = {"sha256": repo.sha256(name), "size": file.stat().st_size,
                                          "pointerSize": 134}
                siblings.append(sibling)
            self._json(200, self._entry(repo) | {"sha": repo.sha, "siblings": siblings}, head)

        def _tree(self, match: re.Match, query: dict, head: bool) -> None:
            repo = self._repo(match["repo"], head)
            if repo is None:
                return
            expand = (query.get("expand") or ["false"])[0].lower() == "true"
            entries = []
            for name, file in sorted(repo.files.items()):
                entry: dict = {"type": "file", "oid": repo.blob_id(name), "size": file.stat().st_size, "path": name}
                if repo.is_lfs(name):
                    entry["lfs"] = {"oid": repo.sha256(name), "size": file.stat().st_size, "pointerSize": 134}
                if expand:
                    entry["lastCommit"] = {"id": repo.sha, "title": "Upload", "date": "2026-11-30T00:00:00.000Z"}
                entries.append(entry)
            self._json(200, entries, head)

        def _resolve(self, match: re.Match, query: dict, head: bool) -> None:
            repo = self._repo(match["repo"], head)
            if repo is None:
                return
            name = match["file"]
            if name not in repo.files:
                return self._error(404, "EntryNotFound", f"{name} does not exist", head)
            if repo.gated and self._token() not in repo.allowed_tokens:
                status = 403 if self._token() else 401
                return self._error(status, "GatedRepo", f"Access to model {repo.repo} is restricted.", head)
            size = repo.files[name].stat().st_size
            common = {"X-Repo-Commit": repo.sha, "Accept-Ranges": "bytes"}
            if repo.is_lfs(name):
                location = f"http://{CDN_HOST}:{hub.port}/cdn/{quote(repo.repo)}/{quote(name)}"
                self.send_response(302)
                for key, val in (common | {"Location": location, "X-Linked-Etag": f'"{repo.sha256(name)}"',
                                           "X-Linked-Size": str(size), "ETag": f'"{repo.blob_id(name)}"',
                                           "Content-Length": "0"}).items():
                    self.send_header(key, val)
                self.end_headers()
                return
            self._file(repo, name, head, common | {"ETag": f'"{repo.blob_id(name)}"'})

        def _cdn(self, match: re.Match, query: dict, head: bool) -> None:
            repo = hub.repos.get(match["repo"])
            if repo is None or match["file"] not in repo.files:
                return self._error(404, "EntryNotFound", "Not found", head)
            self._file(repo, match["file"], head, {"ETag": f'"{repo.sha256(match["file"])}"',
                                                   "Accept-Ranges": "bytes"})

        def _file(self, repo: FakeRepo, name: str, head: bool, headers: dict) -> None:
            path = repo.files[name]
            size = path.stat().st_size
            start, end, status = 0, size - 1, 200
            wanted = None if hub.ignore_range else self.headers.get("Range")
            if wanted:
                m = _RANGE.match(wanted.strip())
                if not m or int(m.group(1)) >= size:
                    return self._json(416, {"error": "bad range"}, head, {"Content-Range": f"bytes */{size}"})
                start = int(m.group(1))
                end = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
                status = 206
                headers = headers | {"Content-Range": f"bytes {start}-{end}/{size}"}
            self.send_response(status)
            for key, val in (headers | {"Content-Length": str(end - start + 1),
                                        "Content-Type": "application/octet-stream"}).items():
                self.send_header(key, val)
            self.end_headers()
            if head:
                return
            self._body(path, start, end - start + 1, f"{repo.repo}/{name}")

        def _body(self, path: Path, start: int, length: int, key: str) -> None:
            fault = self.body_fault
            cut = fault.cut_after if fault is not None else None
            rate = fault.bytes_per_s if fault is not None else None
            left = length if cut is None else min(length, cut)
            block = 1 << 16 if rate is None else max(1, min(1 << 16, int(rate / 20)))
            with open(path, "rb") as handle:
                handle.seek(start)
                while left > 0:
                    chunk = handle.read(min(left, block))
                    if not chunk:
                        break
                    self.wfile.write(chunk)
                    hub.count_body(key, len(chunk))
                    left -= len(chunk)
                    if rate is not None:
                        hub.wait(len(chunk) / rate)
            if cut is not None and cut < length:  # the promised Content-Length is not reached: a cut connection
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)

    return Handler
