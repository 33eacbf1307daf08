"""Open the desktop app: ``run_gui(argv=None) -> int``."""

from __future__ import annotations

import gc
import os
import signal
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from PySide6.QtWidgets import QApplication

    from app.ui.shell.main_window import MainWindow

QUIT_AFTER_PAINT = "GGUF_LAUNCHER_QUIT_AFTER_PAINT"  # the bundle's smoke test and start-up timings set it


def close_on_signals(window) -> None:
    """Ctrl+C in the terminal or a SIGTERM closes the window the normal way (the server is stopped first).

    Python runs signal handlers only between bytecodes; the idle timer gives it that chance while Qt waits.
    """
    from PySide6.QtCore import QTimer

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: window.close())
    window._signal_timer = QTimer(window, interval=250)
    window._signal_timer.timeout.connect(lambda: None)
    window._signal_timer.start()


def quit_after_first_paint(window) -> None:
    """Print "painted" once the window has drawn itself, then close it the normal way (a packaged app cannot be
    handed a Python hook, so an environment variable asks for this)."""
    from PySide6.QtCore import QEvent, QObject, QTimer

    class _OnFirstPaint(QObject):
        def eventFilter(self, watched, event) -> bool:
            if event.type() == QEvent.Type.Paint:
                watched.removeEventFilter(self)
                print("painted", flush=True)
                QTimer.singleShot(0, watched.close)
            return False

    window._quit_after_paint = _OnFirstPaint(window)
    window.installEventFilter(window._quit_after_paint)


def after_first_paint(window, then: Callable[[], object]) -> None:
    """Call ``then`` once from the event loop, just after the window's first paint has returned."""
    from PySide6.QtCore import QEvent, QObject, QTimer

    class _AfterFirstPaint(QObject):
        def eventFilter(self, watched, event) -> bool:
            if event.type() == QEvent.Type.Paint:
                watched.removeEventFilter(self)
                QTimer.singleShot(0, then)
            return False

    window._after_first_paint = _AfterFirstPaint(window)
    window.installEventFilter(window._after_first_paint)


def standard_import_after_pyside() -> None:
    """Put Python's own ``__import__`` back once PySide6 is loaded.

    Importing PySide6 replaces ``builtins.__import__`` with its ``__feature__`` hook, which, after every later
    import, reads the new module's whole source file (``inspect.getsource``) to see whether it mentions PySide6:
    about 15 ms over the 140 modules the window imports after Qt. The hook serves only ``from __feature__ import
    snake_case, true_property``, which the app never uses; without it PySide treats every module as one without
    features, which is what each of them is. PySide keeps the original as ``builtins.__orig_import__``."""
    import builtins

    original = getattr(builtins, "__orig_import__", None)
    if original is not None and builtins.__import__ is not original:
        builtins.__import__ = original


def pause_collector() -> Callable[[], None]:
    """Turn Python's cyclic garbage collector off; the returned call turns it back on (it does nothing when the
    collector was off already: a debugger's or a profiler's choice stays).

    While Qt, the app's modules and the window load, the collector runs about 60 times (some 11 ms here) and finds
    next to nothing to free: everything made is still in use. run_gui turns it back on after the first paint."""
    if not gc.isenabled():
        return lambda: None
    gc.disable()
    return gc.enable


def _plain_tooltips(app) -> None:
    from app.ui.widgets import plain_tooltips  # loaded with its filter, after the first paint

    plain_tooltips.install(app)


def run_gui(argv: list[str] | None = None) -> int:
    resume_collector = pause_collector()  # back on after the first paint, or with the error that stops the start
    try:
        app, window = _open(argv)
    except BaseException:
        resume_collector()
        raise
    from app.core.app_log import install_crash_hook
    from app.ui import workers

    # model names, file names and server answers in tooltips stay text. A tooltip comes only from the event loop
    # once the pointer has rested on a shown widget, so the application-wide filter goes in after the first paint:
    # every event before it (thousands while the window is built, each a call into Python) would pass through it,
    # and the first event of one of Qt's private classes it is handed (a queued call's event) makes PySide create
    # every QtCore class and enum it had left for later (89 enums, about 20 ms), all before the window appeared
    after_first_paint(window, lambda: (resume_collector(), _plain_tooltips(app)))
    try:
        return app.exec()
    finally:
        resume_collector()  # a window that never painted
        install_crash_hook("gui", None)  # the notice goes with the window
        window.shutdown_blocking()  # the event loop is over: waiting here freezes nothing
        workers.wait_for_pool(30_000)  # a cancelled probe stops its test server before it returns


def _open(argv: list[str] | None) -> tuple[QApplication, MainWindow]:
    """The application and its window, shown (what run_gui does before the event loop)."""
    from PySide6.QtWidgets import QApplication

    standard_import_after_pyside()  # before the window's modules: each import would read its source file
    from app import __version__
    from app.core.app_log import configure_app_log, install_crash_hook
    from app.core.settings import load_settings
    from app.ui import i18n
    from app.ui.shell import crash_hook
    from app.ui.shell.app_icon import DESKTOP_FILE_NAME, app_icon
    from app.ui.shell.main_window import MainWindow

    configure_app_log("gui")
    install_crash_hook("gui")  # from here an uncaught error goes to the app log, not as a traceback to the terminal
    existing = QApplication.instance()  # a test (or the start-up benchmark) may have made it already
    app = existing if isinstance(existing, QApplication) else QApplication(
        list(argv if argv is not None else sys.argv[:1]))
    app.setApplicationName("GGUF Launcher")
    app.setApplicationVersion(__version__)
    app.setOrganizationName("gguf-launcher")
    app.setWindowIcon(app_icon())
    app.setDesktopFileName(DESKTOP_FILE_NAME)
    settings = load_settings()
    i18n.preload()
    i18n.apply_language(i18n.startup_language(settings.language))
    window = MainWindow(settings)
    crash_hook.install(window)  # and from here the window says so in one sentence
    if os.environ.get(QUIT_AFTER_PAINT):
        quit_after_first_paint(window)
    window.show()
    window.start_after_first_paint()
    close_on_signals(window)
    return app, window


if __name__ == "__main__":
    sys.exit(run_gui())
