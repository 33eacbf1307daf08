"""An error nothing caught, in the window: the traceback is in the app log (app.core.app_log's hook), the user gets
one sentence in a small non-modal box, once per burst of errors (app.core.app_log.BURST_S), and the app goes on.

``install(window)`` runs once the window exists; exceptions in slots and Qt overrides reach ``sys.excepthook`` (PySide6
calls it), those in other threads ``threading.excepthook``; both are the app log's hook, which calls ``notify`` here
from whatever thread failed, so the box is shown through a queued signal on the GUI thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import QWidget

from app.core.app_log import install_crash_hook

if TYPE_CHECKING:  # the box's class loads with the first error, not before the window's first paint
    from PySide6.QtWidgets import QMessageBox


class CrashNotice(QObject):
    """The window's one sentence about an uncaught error (the hook calls it once per burst)."""

    met = Signal(bool)  # True: the traceback is in the app log

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self.box: QMessageBox | None = None
        self.shown = 0  # how many times the box was opened (tests)
        # queued even on the GUI thread: the box opens after the failing slot has unwound, never inside it
        self.met.connect(self._show, Qt.ConnectionType.QueuedConnection)

    def notify(self, logged: bool) -> None:
        """Called by the app log's hook, from any thread."""
        self.met.emit(logged)

    def sentence(self, logged: bool) -> str:
        if logged:
            return self.tr("Something went wrong inside the app; it was written to the app log. Your work is kept. "
                           "If it happens again, save a diagnostics report (Help menu).")
        return self.tr("Something went wrong inside the app. Your work is kept. If it happens again, save a "
                       "diagnostics report (Help menu).")

    @Slot(bool)
    def _show(self, logged: bool) -> None:
        if not self._window.isVisible() or (self.box is not None and self.box.isVisible()):
            return  # a closing window takes no new box (it would keep the app open); one open box is enough
        if self.box is None:
            from PySide6.QtWidgets import QMessageBox

            self.box = QMessageBox(self._window)
            self.box.setIcon(QMessageBox.Icon.Warning)
            self.box.setStandardButtons(QMessageBox.StandardButton.Ok)
            self.box.setWindowModality(Qt.WindowModality.NonModal)
        self.box.setWindowTitle(self.tr("Something went wrong"))
        self.box.setText(self.sentence(logged))
        self.box.show()
        self.shown += 1


def install(window: QWidget) -> CrashNotice:
    """Show the notice over ``window`` for every uncaught error from now on (the log hook is installed if it was
    not: a debugger's own hook is left alone, and then there is no notice either)."""
    notice = CrashNotice(window)
    install_crash_hook("gui", notice.notify)
    return notice
