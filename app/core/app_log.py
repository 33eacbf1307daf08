"""The app's own log file, beside the server logs: errors the app met, handled and went on from.

``configure_app_log("gui")`` / ``("cli")`` runs once at start. Records of the app's own loggers (``app.*``, one
``logger = logging.getLogger(__name__)`` per module) at INFO and above go to ``gguf-launcher.log`` in the log folder
(``paths.log_dir()``, where the server logs are), rotated at 1 MiB with 3 old files kept. Other libraries' loggers
are not attached, and the app never logs environment variables, API keys or tokens. ``GGUF_LAUNCHER_LOG_LEVEL=DEBUG``
also writes the debug lines (every expected absence: a missing cgroup file, a vanished process).

Nothing here raises: without a writable log folder the app runs without its log.
"""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
import os
import platform
from pathlib import Path

APP_LOG_NAME = "gguf-launcher.log"
MAX_BYTES = 1024 * 1024
BACKUPS = 3
LEVEL_ENV = "GGUF_LAUNCHER_LOG_LEVEL"
_ROOT_LOGGER = "app"
_FORMAT = "%(asctime)s %(levelname)s [{kind} %(process)d] %(name)s: %(message)s"


class _AppLogHandler(logging.handlers.RotatingFileHandler):
    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
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
        handler = _AppLogHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8")
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
