"""Live server log: bounded memory, filter, error/warning colours, pause, copy, save, open folder.

Why it stays smooth under a flood: lines are queued (a deque no longer than the pane can show, so lines
that would scroll out before being seen are never formatted) and drained in chunks of ``chunk_lines``
per event-loop turn with a single ``appendPlainText``; ``setMaximumBlockCount`` keeps the document
bounded; the highlighter does one precompiled regex search per line.
"""

from __future__ import annotations

import re
from collections import deque
from pathlib import Path
from typing import Any, Iterable

from PySide6.QtCore import QTimer, QUrl, Signal, Slot
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QFontDatabase,
    QGuiApplication,
    QSyntaxHighlighter,
    QTextCharFormat,
)
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core import paths
from app.ui.workers import run_task

LEVEL_INFO, LEVEL_WARNING, LEVEL_ERROR = 0, 1, 2
ERROR_RE = re.compile(
    r"error|fail|fatal|abort|assert|exception|traceback|out of memory|segmentation|killed|couldn't|cannot",
    re.IGNORECASE,
)
WARNING_RE = re.compile(r"warn|deprecat|not supported|falling back|fallback", re.IGNORECASE)
DEFAULT_MAX_LINES = 5_000
DEFAULT_CHUNK_LINES = 2_000


def line_text(line: Any) -> str:
    """Text of a core ``LogLine`` (``.text``) or of a plain string."""
    text = getattr(line, "text", None)
    return str(line) if text is None else str(text)


def line_level(text: str) -> int:
    if ERROR_RE.search(text):
        return LEVEL_ERROR
    if WARNING_RE.search(text):
        return LEVEL_WARNING
    return LEVEL_INFO


class LogHighlighter(QSyntaxHighlighter):
    """Errors red, warnings amber, filter matches with a yellow background."""

    def __init__(self, document) -> None:
        super().__init__(document)
        self.needle = ""
        self._error = QTextCharFormat()
        self._error.setForeground(QColor("#c62828"))
        self._warning = QTextCharFormat()
        self._warning.setForeground(QColor("#b26a00"))
        self._match = QTextCharFormat()
        self._match.setBackground(QColor("#fff59d"))

    def highlightBlock(self, text: str) -> None:  # noqa: N802 (Qt name)
        level = line_level(text)
        if level == LEVEL_ERROR:
            self.setFormat(0, len(text), self._error)
        elif level == LEVEL_WARNING:
            self.setFormat(0, len(text), self._warning)
        if self.needle:
            lowered, start = text.lower(), 0
            while (start := lowered.find(self.needle, start)) >= 0:
                self.mergeFormat(start, len(self.needle), self._match)
                start += len(self.needle)

    def mergeFormat(self, start: int, length: int, fmt: QTextCharFormat) -> None:  # noqa: N802
        merged = QTextCharFormat(self.format(start))
        merged.merge(fmt)
        self.setFormat(start, length, merged)


class LogPane(QWidget):
    """``append_lines(lines)`` accepts core ``LogLine`` values or strings, from the GUI thread.

    Signals: ``saved(str path)``, ``saveFailed(str path, str error)``.
    """

    saved = Signal(str)
    saveFailed = Signal(str, str)

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        max_lines: int = DEFAULT_MAX_LINES,
        chunk_lines: int = DEFAULT_CHUNK_LINES,
    ) -> None:
        super().__init__(parent)
        self.max_lines = max_lines
        self.chunk_lines = chunk_lines
        self._history: deque[tuple[str, int]] = deque(maxlen=max_lines)
        self._queue: deque[str] = deque(maxlen=max_lines)
        self._needle = ""
        self._min_level = LEVEL_INFO
        self._paused_arrivals = 0
        self._drain_timer = QTimer(self, singleShot=True, interval=0, timeout=self._drain)
        self._filter_timer = QTimer(self, singleShot=True, interval=150, timeout=self._apply_filter)
        self._build()
        self.retranslate()

    # --- layout --------------------------------------------------------------------------------

    def _build(self) -> None:
        self.filter_edit = QLineEdit(self, clearButtonEnabled=True)
        self.filter_edit.textChanged.connect(lambda _text: self._filter_timer.start())
        self.level_combo = QComboBox(self)
        self.level_combo.addItems(["", "", ""])
        self.level_combo.currentIndexChanged.connect(lambda _i: self._apply_filter())
        self.pause_button = QToolButton(self, checkable=True)
        self.pause_button.toggled.connect(self.set_paused)
        self.copy_button = QPushButton(self, clicked=self.copy_to_clipboard)
        self.save_button = QPushButton(self, clicked=self._ask_save_path)
        self.folder_button = QPushButton(self, clicked=self.open_log_folder)
        self.clear_button = QPushButton(self, clicked=self.clear)
        self.status_label = QLabel(self)
        self.view = QPlainTextEdit(self, readOnly=True)
        self.view.setMaximumBlockCount(self.max_lines)
        self.view.setLineWrapMode(QPlainTextEdit.NoWrap)
        self.view.setUndoRedoEnabled(False)
        self.view.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        self.highlighter = LogHighlighter(self.view.document())

        bar = QHBoxLayout()
        for widget in (self.filter_edit, self.level_combo, self.pause_button, self.copy_button,
                       self.save_button, self.folder_button, self.clear_button):
            bar.addWidget(widget)
        bar.setStretch(0, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.status_label)

    def retranslate(self) -> None:
        self.filter_edit.setPlaceholderText(self.tr("Filter lines…"))
        for index, label in enumerate((self.tr("All lines"), self.tr("Warnings and errors"), self.tr("Errors only"))):
            self.level_combo.setItemText(index, label)
        self.pause_button.setText(self.tr("Pause"))
        self.pause_button.setToolTip(self.tr("Freeze the view to read; new lines wait until you resume"))
        self.copy_button.setText(self.tr("Copy"))
        self.copy_button.setToolTip(self.tr("Copy the selection, or every shown line when nothing is selected"))
        self.save_button.setText(self.tr("Save…"))
        self.folder_button.setText(self.tr("Open log folder"))
        self.folder_button.setToolTip(self.tr("The full log of every run is kept there"))
        self.clear_button.setText(self.tr("Clear"))
        self._update_status()

    # --- ingest --------------------------------------------------------------------------------

    def append_lines(self, lines: Iterable[Any]) -> None:
        for line in lines:
            text = line_text(line)
            level = line_level(text)
            self._history.append((text, level))
            if self._accepts(text, level):
                self._queue.append(text)
                if self.is_paused():
                    self._paused_arrivals += 1
        if self.is_paused():
            self._update_status()
        elif self._queue and not self._drain_timer.isActive():
            self._drain_timer.start()

    def _accepts(self, text: str, level: int) -> bool:
        return level >= self._min_level and (not self._needle or self._needle in text.lower())

    @Slot()
    def _drain(self) -> None:
        if self.is_paused() or not self._queue:
            return
        count = min(self.chunk_lines, len(self._queue))
        chunk = [self._queue.popleft() for _ in range(count)]
        self.view.appendPlainText("\n".join(chunk))
        bar = self.view.verticalScrollBar()
        bar.setValue(bar.maximum())
        if self._queue:
            self._drain_timer.start()

    def flush_pending(self) -> None:
        """Show every queued line now (tests; the drain timer does this in normal use)."""
        while self._queue and not self.is_paused():
            self._drain()

    # --- filter / pause ------------------------------------------------------------------------

    def set_filter(self, text: str) -> None:
        self.filter_edit.setText(text)
        self._apply_filter()

    def set_min_level(self, level: int) -> None:
        self.level_combo.setCurrentIndex(level)

    @Slot()
    def _apply_filter(self) -> None:
        self._filter_timer.stop()
        self._needle = self.filter_edit.text().strip().lower()
        self._min_level = self.level_combo.currentIndex()
        self.highlighter.needle = self._needle
        self.view.clear()
        self._queue.clear()
        self._queue.extend(text for text, level in self._history if self._accepts(text, level))
        self._paused_arrivals = len(self._queue) if self.is_paused() else 0
        self._update_status()
        self.flush_pending() if len(self._queue) <= self.chunk_lines else self._drain_timer.start()

    def is_paused(self) -> bool:
        return self.pause_button.isChecked()

    @Slot(bool)
    def set_paused(self, paused: bool) -> None:
        if self.pause_button.isChecked() != paused:
            self.pause_button.setChecked(paused)  # re-enters through toggled
            return
        if not paused:
            self._paused_arrivals = 0
            self._drain_timer.start()
        self._update_status()

    def _update_status(self) -> None:
        if self.is_paused():
            text = self.tr("Paused. New lines waiting: {count}").format(count=self._paused_arrivals)
        else:
            text = ""
        self.status_label.setText(text)
        self.status_label.setVisible(bool(text))

    def clear(self) -> None:
        self._history.clear()
        self._queue.clear()
        self._paused_arrivals = 0
        self.view.clear()
        self._update_status()

    # --- copy / save / folder ------------------------------------------------------------------

    def shown_text(self) -> str:
        """Every line that passes the filter, including lines still queued or held by pause."""
        return "\n".join(text for text, level in self._history if self._accepts(text, level))

    def copy_to_clipboard(self) -> None:
        if self.view.textCursor().hasSelection():
            self.view.copy()
        else:
            QGuiApplication.clipboard().setText(self.shown_text())

    def _ask_save_path(self) -> None:
        path, _filter = QFileDialog.getSaveFileName(
            self, self.tr("Save log"), "server-log.txt", self.tr("Text files (*.txt *.log)")
        )
        if path:
            self.save_to(path)

    def save_to(self, path: str | Path) -> None:
        """Write the shown lines in a pool thread; ``saved`` or ``saveFailed`` follows."""
        target = str(path)
        run_task(
            Path(target).write_text, self.shown_text() + "\n", encoding="utf-8",
            on_done=lambda _n: self.saved.emit(target),
            on_error=lambda exc: self._save_failed(target, exc),
        )

    def _save_failed(self, path: str, error: BaseException) -> None:
        reason = getattr(error, "strerror", None) or str(error)
        self.status_label.setText(self.tr("Could not save the log to {path}: {error}").format(path=path, error=reason))
        self.status_label.setVisible(True)
        self.saveFailed.emit(path, reason)

    def open_log_folder(self) -> bool:
        return QDesktopServices.openUrl(QUrl.fromLocalFile(str(paths.log_dir())))

    def shown_line_count(self) -> int:
        return self.view.document().blockCount()
