"""Download one wheel by running pip as a child process: byte progress, cancel, and a failure in plain words.

pip does the network part, so the user's pip set-up (index, mirror, proxy, certificates) applies and pip's
own HTTP cache serves a second download. ``--progress-bar raw`` (pip 24.1+) prints ``Progress N of TOTAL``
lines on stdout; an older pip rejects it and is run again without a progress bar.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.core.demo import errors
from app.core.demo.errors import DemoFetchError

POLL_S = 0.1
STOP_GRACE_S = 2.0
EVIDENCE_LINES = 15
_PROGRESS = re.compile(r"^Progress (\d+) of (\d+)\s*$")
_REJECTS_RAW = re.compile(r"invalid choice: '?raw'?|no such option: --progress-bar", re.IGNORECASE)
_NO_PIP = re.compile(r"No module named pip\b", re.IGNORECASE)
_DISK_FULL = re.compile(r"No space left on device|\[Errno 28\]", re.IGNORECASE)
_SERVER_TROUBLE = re.compile(r"too many (\d{3}) error responses", re.IGNORECASE)
_HTTP_STATUS = re.compile(r"\b([45]\d\d) (?:Client|Server) Error\b|\bHTTP error ([45]\d\d)\b", re.IGNORECASE)
_TLS = re.compile(r"SSLError|CERTIFICATE_VERIFY_FAILED|certificate verify failed|SSL: ", re.IGNORECASE)
_NETWORK = re.compile(
    r"Failed to establish a new connection|NewConnectionError|Temporary failure in name resolution|"
    r"Name or service not known|nodename nor servname|getaddrinfo failed|No address associated with hostname|"
    r"Network is unreachable|No route to host|Connection refused|Connection reset|Connection aborted|"
    r"Connection broken|connection broken by|RemoteDisconnected|IncompleteRead|ConnectTimeout|ReadTimeout|"
    r"timed out|ProxyError|Cannot connect to proxy|Max retries exceeded", re.IGNORECASE)
_NOT_FOUND = re.compile(r"No matching distribution found|Could not find a version that satisfies", re.IGNORECASE)
_ERROR_LINE = re.compile(r"^ERROR:\s*(.+)$")

BytesFn = Callable[[int, int], None]  # (bytes done, bytes total; 0 = unknown)
CancelFn = Callable[[], bool]


@dataclass(frozen=True)
class PipRequest:
    """One ``pip download`` of a single wheel into ``dest``.

    ``find_links``: take the wheel only from this local folder (or page), never from an index;
    ``index_url``: use this index instead of the configured one; ``pip_cache=False`` passes ``--no-cache-dir``."""

    requirement: str
    dest: Path
    find_links: str | None = None
    index_url: str | None = None
    pip_cache: bool = True
    retries: int = 2
    python: str | None = None

    def argv(self, progress_bar: str = "raw") -> list[str]:
        argv = [self.python or sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                "--disable-pip-version-check", "--no-input", "--progress-bar", progress_bar,
                "--retries", str(self.retries), "-d", str(self.dest)]
        if not self.pip_cache:
            argv.append("--no-cache-dir")
        if self.find_links is not None:
            argv += ["--no-index", "--find-links", self.find_links]
        if self.index_url is not None:
            argv += ["--index-url", self.index_url]
        return argv + [self.requirement]


def pip_usable(request: PipRequest) -> bool:
    """A frozen (PyInstaller) app has no pip, and its executable is the app itself, not Python."""
    return request.python is not None or not getattr(sys, "frozen", False)


def download_wheel(request: PipRequest, wheel_prefix: str, *, on_bytes: BytesFn | None = None,
                   cancel: CancelFn | None = None, needed: int = 0) -> Path:
    """Run pip; return the wheel it saved in ``request.dest``. Raises DemoFetchError or DemoCancelled."""
    if not pip_usable(request):
        raise errors.no_pip()
    for progress_bar in ("raw", "off"):
        returncode, lines = _run(request.argv(progress_bar), request.dest, on_bytes, cancel)
        if returncode == 0:
            return _saved_wheel(request.dest, wheel_prefix, lines)
        if progress_bar == "raw" and any(_REJECTS_RAW.search(text) for _, text in lines):
            continue  # pip older than 24.1
        raise classify_failure(lines, request.requirement, folder=str(request.dest.parent), needed=needed)
    raise AssertionError("unreachable")


def _child_env(dest: Path) -> dict[str, str]:
    """pip's own temporary files (the partial download) go inside ``dest``, which the caller removes."""
    tmp = dest / ".tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(TMPDIR=str(tmp), TEMP=str(tmp), TMP=str(tmp), PYTHONIOENCODING="utf-8", PYTHONUNBUFFERED="1")
    return env


def _run(argv: list[str], dest: Path, on_bytes: BytesFn | None,
         cancel: CancelFn | None) -> tuple[int | None, list[tuple[str, str]]]:
    from app.core.process.child import ChildProcess  # psutil and the spawner only when a fetch runs

    lines: deque[tuple[str, str]] = deque(maxlen=400)
    latest: list[tuple[int, int]] = []
    exited = threading.Event()

    def on_line(stream: str, text: str) -> None:  # reader threads
        match = _PROGRESS.match(text) if stream == "stdout" else None
        if match:
            latest[:] = [(int(match.group(1)), int(match.group(2)))]
        else:
            lines.append((stream, text))

    child = ChildProcess(argv, on_line=on_line, on_exit=lambda _child, _rc: exited.set(),
                         env=_child_env(dest), register=False)
    delivered = None
    try:
        while not exited.wait(POLL_S):
            if cancel is not None and cancel():
                child.stop(STOP_GRACE_S)
                raise errors.cancelled()
            if on_bytes is not None and latest and latest[0] != delivered:
                delivered = latest[0]
                on_bytes(*delivered)  # on the caller's thread, never on pip's reader threads
    finally:
        if child.running:  # cancelled, Ctrl-C, or any error in the callback: pip must not keep downloading
            child.stop(STOP_GRACE_S)
    if on_bytes is not None and latest and latest[0] != delivered:
        on_bytes(*latest[0])
    return child.returncode, list(lines)


def _saved_wheel(dest: Path, wheel_prefix: str, lines: list[tuple[str, str]]) -> Path:
    wheels = sorted(p for p in dest.glob("*.whl") if p.name.lower().startswith(wheel_prefix))
    if not wheels:
        raise errors.pip_failed("pip finished but saved no package file.", _evidence(lines))
    return wheels[0]


def _evidence(lines: list[tuple[str, str]]) -> list[str]:
    return [text for _, text in lines][-EVIDENCE_LINES:]


def classify_failure(lines: list[tuple[str, str]], requirement: str, *, folder: str = "?",
                     needed: int = 0) -> DemoFetchError:
    """pip's output as one cause: offline (no network / index unreachable) versus everything else."""
    stderr = [text for stream, text in lines if stream == "stderr"] or [text for _, text in lines]
    joined = "\n".join(stderr)
    evidence = _evidence(lines)
    if _NO_PIP.search(joined):
        return errors.no_pip()
    if _DISK_FULL.search(joined):
        return errors.disk_full(folder, needed)
    trouble = _SERVER_TROUBLE.search(joined)
    if trouble:
        return errors.refused(f"HTTP {trouble.group(1)}", evidence)
    status = _HTTP_STATUS.search(joined)
    if status:
        return errors.refused(f"HTTP {status.group(1) or status.group(2)}", evidence)
    if _TLS.search(joined):
        return errors.refused("the secure connection could not be verified", evidence)
    if _NETWORK.search(joined):
        return errors.offline(evidence)
    if _NOT_FOUND.search(joined):
        return errors.not_offered(requirement, evidence)
    messages = [m.group(1) for m in map(_ERROR_LINE.match, stderr) if m]
    detail = messages[-1] if messages else (stderr[-1] if stderr else "pip stopped without saying why")
    return errors.pip_failed(detail.rstrip(".") + ".", evidence)
