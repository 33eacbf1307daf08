"""Help → Save a diagnostics report…: written off the GUI thread, one box with where it is and Open folder; a place
that cannot be written is a sentence in the box, never a traceback."""

from __future__ import annotations

import zipfile

from PySide6.QtWidgets import QApplication

from app.core.paths import data_dir
from app.core.report.bundle import reports_dir


def _box(qtbot, window):
    qtbot.waitUntil(lambda: window.report.box is not None and window.report.box.isVisible(), timeout=30_000)
    return window.report.box


def test_the_menu_writes_the_report_and_offers_its_folder(qtbot, window, monkeypatch):
    from PySide6.QtGui import QDesktopServices

    opened = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()) or False)
    window.menus.report_action.trigger()
    box = _box(qtbot, window)
    result = window.report.result
    assert result is not None and result.path.parent == reports_dir()
    assert f"saved as {result.path.name}" in box.text() and "removed" in box.informativeText()
    with zipfile.ZipFile(result.path) as archive:
        assert {"README.txt", "scan.json", "settings.json"} <= set(archive.namelist())
    assert window.menus.report_action.isEnabled()
    assert window.report.folder_button is not None and window.report.folder_button.text() == "Open folder"
    window.report.folder_button.click()  # no file manager here: the path is copied, and the status bar says so
    assert opened == [str(result.path.parent)]
    assert QApplication.clipboard().text() == str(result.path)
    assert "path was copied" in window.statusBar().currentMessage()


def test_a_report_that_cannot_be_written_is_told_in_the_box(qtbot, window):
    data_dir().mkdir(parents=True, exist_ok=True)
    reports_dir().write_text("a file where the reports folder should be")
    window.menus.report_action.trigger()
    box = _box(qtbot, window)
    assert "could not be written" in box.text() and "Traceback" not in box.text() + box.informativeText()
    assert window.report.folder_button is None
