"""Help → "Save a diagnostics report…": the core report written off the GUI thread, then one box that says where it
is, what was left out of it (secrets, names), and offers to open its folder."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal

from app.ui.widgets.problem_view import problem_text
from app.ui.workers import run_task

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMessageBox, QWidget

    from app.core.report.bundle import ReportResult

logger = logging.getLogger(__name__)


def _write(_progress=None):  # worker thread
    from app.core.report.bundle import write_report

    return write_report()


class DiagnosticsReport(QObject):
    """``busyChanged(bool)``: a report is being written (the menu item waits meanwhile); ``message(str)``: a
    sentence for the status bar."""

    busyChanged = Signal(bool)
    message = Signal(str)

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        self.busy = False
        self.result: ReportResult | None = None
        self.box: QMessageBox | None = None

    def save(self) -> None:
        if self.busy:
            return
        self._set_busy(True)
        self.message.emit(self.tr("Writing the diagnostics report…"))
        run_task(_write, on_done=self._done, on_error=self._failed, owner=self)

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.busyChanged.emit(busy)

    def _done(self, result: ReportResult) -> None:
        self._set_busy(False)
        self.result = result
        self.message.emit(self.tr("Diagnostics report saved: {path}").format(path=result.path))
        text = self.tr("The diagnostics report is saved as {name}. Send this file to whoever helps you.").format(
            name=result.path.name)
        detail = self.tr("API keys, tokens, your user name, your home folder and this computer's name were removed "
                         "from it.")
        if result.problems:
            detail += "\n" + self.tr("Not included (it could not be read): {parts}").format(
                parts=", ".join(problem.split(":", 1)[0] for problem in result.problems))
        self._show(text, detail, offer_folder=True)

    def _failed(self, error: BaseException) -> None:
        self._set_busy(False)
        from app.core.problem import UserError

        if isinstance(error, UserError):
            self._show(problem_text(error), "", offer_folder=False)
        else:
            logger.error("diagnostics report failed", exc_info=error)
            self._show(self.tr("The diagnostics report could not be written."),
                       self.tr("The app's log file says why."), offer_folder=False)

    def _show(self, text: str, detail: str, *, offer_folder: bool) -> None:
        from PySide6.QtWidgets import QMessageBox  # dialogs are imported when used: faster start-up

        box = QMessageBox(self.window)
        box.setWindowTitle(self.tr("Diagnostics report"))
        box.setTextFormat(Qt.TextFormat.PlainText)  # paths are shown as typed, never as rich text
        box.setText(text)
        box.setInformativeText(detail)
        self.folder_button = box.addButton(self.tr("Open folder"), QMessageBox.ButtonRole.ActionRole) \
            if offer_folder else None
        box.addButton(QMessageBox.StandardButton.Close)
        box.buttonClicked.connect(self._on_button)
        self.box = box
        box.open()

    def _on_button(self, button) -> None:
        if button is not None and button is self.folder_button and self.result is not None:
            self.open_folder(self.result.path)

    def open_folder(self, path: Path) -> bool:
        """The report's folder in the file manager; without one, its path is copied and the status bar says so."""
        from PySide6.QtCore import QUrl  # with its 5 enums: made when first used, not before the first paint
        from PySide6.QtGui import QDesktopServices, QGuiApplication

        if QDesktopServices.openUrl(QUrl.fromLocalFile(str(path.parent))):
            return True
        QGuiApplication.clipboard().setText(str(path))
        self.message.emit(self.tr("No file manager opened, so the report's path was copied: {path}").format(path=path))
        return False
