"""Open the desktop app: ``run_gui(argv=None) -> int``."""

from __future__ import annotations

import sys


def run_gui(argv: list[str] | None = None) -> int:
    from PySide6.QtWidgets import QApplication

    from app import __version__
    from app.core.settings import load_settings
    from app.ui import i18n, workers
    from app.ui.main_window import MainWindow

    app = QApplication.instance() or QApplication(list(argv if argv is not None else sys.argv[:1]))
    app.setApplicationName("GGUF Launcher")
    app.setApplicationVersion(__version__)
    app.setOrganizationName("gguf-launcher")
    settings = load_settings()
    i18n.preload()
    i18n.apply_language(i18n.startup_language(settings.language))
    window = MainWindow(settings)
    window.show()
    window.start_after_first_paint()
    try:
        return app.exec()
    finally:
        window.shutdown_blocking()  # the event loop is over: waiting here freezes nothing
        workers.wait_for_pool(30_000)  # a cancelled probe stops its test server before it returns


if __name__ == "__main__":
    sys.exit(run_gui())
