"""A child's output (the model server's, a shared worker's): a bounded in-memory tail for the UI plus the full text in a
rotating log file."""

from __future__ import annotations

import logging
import logging.handlers
import re
import threading
import time
from collections import deque
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from app.core.paths import log_dir

DEFAULT_TAIL_LINES = 2000
LOG_FILE_MAX_BYTES = 5 * 1024 * 1024
LOG_FILE_BACKUPS = 3


@dataclass(frozen=True)
class LogLine:
    time: float  # time.time() when the line was read
    stream: str  # "stdout" | "stderr" | "app" (the supervisor's own notes)
    text: str

    def format(self) -> str:
        stamp = datetime.fromtimestamp(self.time).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        return f"{stamp} [{self.stream}] {self.text}"


def safe_log_name(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "server"
    return cleaned[:80]


class ServerLog:
    """Thread-safe: reader threads append, the UI and the crash decoder read the tail."""

    def __init__(self, name: str = "server", *, max_lines: int = DEFAULT_TAIL_LINES, directory: Path | None = None):
        self._lines: deque[LogLine] = deque(maxlen=max_lines)
        self._lock = threading.Lock()
        self.path = (directory or log_dir()) / f"{safe_log_name(name)}.log"
        self._handler = logging.handlers.RotatingFileHandler(
            self.path, maxBytes=LOG_FILE_MAX_BYTES, backupCount=LOG_FILE_BACKUPS, encoding="utf-8", delay=True
        )
        self._handler.setFormatter(logging.Formatter("%(message)s"))
        self._handler.handleError = lambda record: None  # a full disk must not print tracebacks into the terminal
        self._closed = False

    def append(self, stream: str, text: str, when: float | None = None) -> LogLine:
        line = LogLine(time.time() if when is None else when, stream, text)
        with self._lock:
            self._lines.append(line)
            if not self._closed:  # late lines of a dying child: emit() would reopen, and leak, the closed file
                self._handler.emit(logging.makeLogRecord({"msg": line.format(), "levelno": logging.INFO}))
        return line

    def tail(self, n: int | None = None) -> list[LogLine]:
        with self._lock:
            lines = list(self._lines)
        return lines if n is None else lines[-n:] if n > 0 else []

    def texts(self, n: int | None = None, *, streams: tuple[str, ...] = ("stdout", "stderr")) -> list[str]:
        """The text of the last lines the child printed (the supervisor's own notes left out)."""
        lines = [line.text for line in self.tail() if line.stream in streams]
        return lines if n is None else lines[-n:]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._handler.close()
