"""The app's own log file, beside the server logs: errors the app met, handled and went on from.

``configure_app_log("gui")`` / ``("cli")`` runs once at start. Records of the app's own loggers (``app.*``, one
``logger = logging.getLogger(__name__)`` per module) at INFO and above go to ``gguf-launcher.log`` in the log folder
(``paths.log_dir()``, where the server logs are), rotated at 1 MiB with 3 old files kept. Other libraries' loggers
are not attached, and the app never logs environment variables, API keys or tokens. ``GGUF_LAUNCHER_LOG_LEVEL=DEBUG``
also writes the debug lines (every expected absence: a missing cgroup file, a vanished process).

Nothing here raises: without a writable log folder the app runs without its log.

``install_crash_hook(kind, notify)`` (the window and the CLI, at start) sends uncaught exceptions there too: the
main thread's (``sys.excepthook``, which PySide6 also calls for an exception in a slot or a Qt override) and other
threads' (``threading.excepthook``). The traceback goes to this log, the terminal gets one sentence saying where,
and ``notify`` (the window's notice) is told; a debugger or test runner that already watches them is left alone.
"""

from __future__ import annotations

import contextlib
import logging
import os
import platform
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from app.core.text import T, Text

APP_LOG_NAME = "gguf-launcher.log"
MAX_BYTES = 1024 * 1024
BACKUPS = 3
LEVEL_ENV = "GGUF_LAUNCHER_LOG_LEVEL"
_ROOT_LOGGER = "app"
_FORMAT = "%(asctime)s %(levelname)s [{kind} %(process)d] %(name)s: %(message)s"
BURST_S = 10.0  # seconds: errors closer together than this are one burst, told to the user once
logger = logging.getLogger(__name__)


class _AppLogHandler(logging.FileHandler):
    """An appended file rotated before a line would take it to ``max_bytes``: ``name.1`` is the newest old file,
    ``backups`` of them kept, as ``logging.handlers.RotatingFileHandler`` does. Written here because that module
    brings socket, pickle and queue into every start of the window (5-9 ms before its first paint)."""

    def __init__(self, path: Path, max_bytes: int, backups: int) -> None:
        super().__init__(path, mode="a", encoding="utf-8")
        self.max_bytes = max_bytes
        self.backups = backups

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if self._full(self.format(record) + "\n"):
                self._rotate()
        except Exception:  # noqa: BLE001 - handleError: the line is dropped without a word, as the stdlib's would be
            self.handleError(record)
            return
        super().emit(record)

    def _full(self, line: str) -> bool:
        if os.path.exists(self.baseFilename) and not os.path.isfile(self.baseFilename):
            return False  # a device such as /dev/null is never rotated
        if self.stream is None:  # closed by close(): FileHandler.emit opens it again, so does the size check
            self.stream = self._open()
        self.stream.seek(0, os.SEEK_END)  # another process may have written to it
        return self.stream.tell() + len(line) >= self.max_bytes

    def _rotate(self) -> None:
        if self.stream is not None:
            self.stream.close()  # before the renames: Windows renames no open file
        try:
            for number in range(self.backups - 1, 0, -1):
                older, newer = f"{self.baseFilename}.{number}", f"{self.baseFilename}.{number + 1}"
                if os.path.exists(older):
                    if os.path.exists(newer):
                        os.remove(newer)
                    os.rename(older, newer)
            first = f"{self.baseFilename}.1"
            if os.path.exists(first):
                os.remove(first)
            if os.path.exists(self.baseFilename):
                os.rename(self.baseFilename, first)
        finally:
            self.stream = self._open()

    def handleError(self, record: logging.LogRecord) -> None:
        """A full disk or a file rotated away by another process must not print tracebacks into the terminal."""


def _level() -> int:
    name = os.environ.get(LEVEL_ENV, "").strip().upper()
    level = logging.getLevelName(name) if name else logging.INFO
    return level if isinstance(level, int) else logging.INFO


def _our_handler(logger: logging.Logger) -> _AppLogHandler | None:
    return next((h for h in logger.handlers if isinstance(h, _AppLogHandler)), None)


def configure_app_log(kind: str) -> Path | None:
    """Attach the app log (``kind``: "gui" or "cli", written in each line). Returns its path, or None when the
    folder is not writable. Calling it again (another GGUF_LAUNCHER_HOME, as tests do) moves the log there."""
    logger = logging.getLogger(_ROOT_LOGGER)
    try:
        from app import __version__
        from app.core.paths import log_dir

        path = log_dir() / APP_LOG_NAME
        existing = _our_handler(logger)
        if existing is not None and Path(existing.baseFilename) == path.resolve():
            return path
        handler = _AppLogHandler(path, MAX_BYTES, BACKUPS)
    except Exception:  # noqa: BLE001 - an unwritable or odd log folder: the app runs without its own log
        return None
    close_app_log()
    handler.setFormatter(logging.Formatter(_FORMAT.format(kind=kind)))
    logger.addHandler(handler)
    logger.setLevel(_level())
    logger.info("GGUF Launcher %s started (%s; Python %s on %s)", __version__, kind,
                platform.python_version(), platform.platform(terse=True))
    return path


def close_app_log() -> None:
    """Detach and close the app log (tests; a second configure)."""
    logger = logging.getLogger(_ROOT_LOGGER)
    handler = _our_handler(logger)
    while handler is not None:
        logger.removeHandler(handler)
        with contextlib.suppress(OSError):  # the last flush on a full disk or a vanished folder
            handler.close()
        handler = _our_handler(logger)
    logger.setLevel(logging.NOTSET)


def app_log_path() -> Path | None:
    """Where the app log is being written, or None when it is not (never configured, or no writable folder)."""
    handler = _our_handler(logging.getLogger(_ROOT_LOGGER))
    return Path(handler.baseFilename) if handler is not None else None


# --- uncaught exceptions ------------------------------------------------------------------------------------------

ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]
Notify = Callable[[bool], None]  # told (from any thread) that an error was met; True when its traceback was logged


@dataclass
class _CrashHook:
    kind: str
    notify: Notify | None
    previous_sys: Callable[[type[BaseException], BaseException, TracebackType | None], object]
    previous_thread: Callable[[threading.ExceptHookArgs], object]
    seen: Counter[str] = field(default_factory=Counter)
    last_error: float = float("-inf")
    lock: threading.Lock = field(default_factory=threading.Lock)


_hook: _CrashHook | None = None


def install_crash_hook(kind: str, notify: Notify | None = None) -> bool:
    """Send uncaught exceptions to the app log (``kind``: "gui" or "cli"). Calling it again changes ``notify``.
    Returns False, installing nothing, when something else already replaced Python's hooks (a debugger, pytest)."""
    global _hook
    if _hook is not None:
        _hook.kind, _hook.notify = kind, notify
        return True
    if sys.excepthook is not sys.__excepthook__ or threading.excepthook is not threading.__excepthook__:
        logger.debug("uncaught exceptions are already watched by another tool; the app's hook is not installed")
        return False
    _hook = _CrashHook(kind, notify, sys.excepthook, threading.excepthook)
    sys.excepthook = _on_uncaught
    threading.excepthook = _on_thread_uncaught
    return True


def uninstall_crash_hook() -> None:
    """Put back the hooks ``install_crash_hook`` replaced (tests)."""
    global _hook
    if _hook is None:
        return
    sys.excepthook, threading.excepthook = _hook.previous_sys, _hook.previous_thread
    _hook = None


def _on_uncaught(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    if issubclass(exc_type, KeyboardInterrupt):  # Ctrl+C where nothing caught it: the user stopped it, not a fault
        return
    report_uncaught((exc_type, exc, tb), threading.current_thread().name)


def _on_thread_uncaught(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit or args.exc_value is None:  # Python's own hook is silent on these too
        return
    name = args.thread.name if args.thread is not None else "?"
    report_uncaught((args.exc_type, args.exc_value, args.exc_traceback), name)


def report_uncaught(exc_info: ExcInfo, thread_name: str) -> None:
    """Log the traceback (the first time from its place; repeats as a count); at the start of a burst (no error in
    the ``BURST_S`` before), say one sentence on stderr and tell the window. Never raises: nothing would catch it."""
    hook = _hook
    try:
        logged = _log_uncaught(exc_info, thread_name, hook)
        if hook is not None and not _starts_burst(hook):  # the same burst: the log has it, the user was told
            return
        _say(exc_info, logged)
        if hook is not None and hook.notify is not None:
            hook.notify(logged is not None)
    except Exception:  # a failing report must not become a second uncaught error
        logger.debug("reporting an uncaught exception failed", exc_info=True)


def _place(exc_info: ExcInfo) -> str:
    frames = traceback.extract_tb(exc_info[2])
    where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?"
    return f"{exc_info[0].__qualname__} at {where}"


def _log_uncaught(exc_info: ExcInfo, thread_name: str, hook: _CrashHook | None) -> Path | None:
    path = app_log_path()
    if path is None:
        return None
    place = _place(exc_info)
    count = 1
    if hook is not None:
        with hook.lock:
            hook.seen[place] += 1
            count = hook.seen[place]
    if count == 1:
        logger.error("Uncaught exception in thread %s (the app went on where it could)", thread_name,
                     exc_info=exc_info)
    elif count & (count - 1) == 0:  # 2, 4, 8, ...: a failure that repeats on every paint cannot fill the disk
        logger.error("The same uncaught exception again (%s; %d times so far)", place, count)
    return path


def _starts_burst(hook: _CrashHook) -> bool:
    now = time.monotonic()
    with hook.lock:
        starts = now - hook.last_error >= BURST_S
        hook.last_error = now
    return starts


def crash_sentence(log_path: Path | None) -> Text:
    """The terminal's one sentence about an uncaught error."""
    if log_path is None:
        return T("Something went wrong inside gguf-launcher, and the app log could not be written, so the details "
                 "follow here.",
                 "gguf-launcher 内部出错，且无法写入应用日志，详细信息如下。")
    return T("Something went wrong inside gguf-launcher; the details were written to the app log: {path}. If it "
             "happens again, `gguf-launcher report` saves a diagnostics report to send.",
             "gguf-launcher 内部出错；详细信息已写入应用日志：{path}。如果再次发生，运行 `gguf-launcher report` "
             "保存一份诊断报告发给帮助你的人。", path=str(log_path))


def _say(exc_info: ExcInfo, logged: Path | None) -> None:
    stream = sys.stderr
    if stream is None:  # a windowed app on Windows has no terminal
        return
    with contextlib.suppress(Exception):
        stream.write(f"{crash_sentence(logged)}\n")
        if logged is None:  # the only record left is the terminal
            traceback.print_exception(*exc_info, file=stream)
        stream.flush()
