"""Live server log: bounded memory, filter, error/warning colours, pause, copy, save, open folder.

Why a hand-painted view and not a QPlainTextEdit or a QListView (both measured here, see
benchmarks/bench_log_pane.py): QPlainTextEdit with ``setMaximumBlockCount`` costs ~50 µs for every line it
drops off the top, so a full pane under a flood stalls for hundreds of ms; a QListView over a Python model
calls ``data()`` a few hundred times per frame, and while the supervisor's reader thread holds the GIL each
of those calls waits for it (57 ms paints). ``LogView`` keeps the lines in a Python list (a batch is one
``extend`` and one ``del``) and paints the visible ones in a single Python call. Lines arrive already
batched (``SupervisorBridge``); a batch longer than the pane keeps only its newest lines.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QFontDatabase,
    QGuiApplication,
    QKeySequence,
    QPainter,
    QPalette,
    QShortcut,
)
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core import paths
from app.core.process.child_log import LogLine
from app.ui.i18n import Retranslating
from app.ui.widgets.wheel_guard import guard_wheel
from app.ui.workers import Debouncer, run_task

LEVEL_INFO, LEVEL_WARNING, LEVEL_ERROR = 0, 1, 2
ERROR_RE = re.compile(
    r"error|fail|fatal|abort|assert|exception|traceback|out of memory|segmentation|killed|couldn't|cannot",
    re.IGNORECASE,
)
WARNING_RE = re.compile(r"warn|deprecat|not supported|falling back|fallback", re.IGNORECASE)
LEVEL_COLOURS = {LEVEL_ERROR: "#c62828", LEVEL_WARNING: "#b26a00"}
DEFAULT_MAX_LINES = 10_000


def line_text(line: LogLine | str) -> str:
    """Text of a core ``LogLine`` or of a plain string (the benchmarks and the tests feed strings)."""
    return line.text if isinstance(line, LogLine) else str(line)


def line_level(text: str) -> int:
    if ERROR_RE.search(text):
        return LEVEL_ERROR
    if WARNING_RE.search(text):
        return LEVEL_WARNING
    return LEVEL_INFO


class LogView(QAbstractScrollArea):
    """A terminal-like view of at most ``max_lines`` lines, painted by one Python call per frame.

    Lines are plain strings in a list; a batch is one ``extend`` and one ``del`` of the oldest. Only the
    visible lines are coloured (one regex each) and drawn. Click, drag and shift-click select whole lines.
    """

    def __init__(self, max_lines: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.max_lines = max_lines
        self.lines: list[str] = []
        self._dropped = 0  # lines removed from the top so far: selections are kept in absolute numbers
        self._anchor: int | None = None
        self._cursor: int | None = None
        self._widest = 0
        self._pens = {level: QColor(colour) for level, colour in LEVEL_COLOURS.items()}
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.viewport().setCursor(Qt.CursorShape.IBeamCursor)

    # --- content ---------------------------------------------------------------------------------

    def append(self, texts: list[str]) -> None:
        bar = self.verticalScrollBar()
        following = bar.value() >= bar.maximum()
        self.lines.extend(texts[-self.max_lines:])
        overflow = len(self.lines) - self.max_lines
        if overflow > 0:
            del self.lines[:overflow]
            self._dropped += overflow
        self._widest = max(self._widest, max((len(text) for text in texts[-self.max_lines:]), default=0))
        self._update_scrollbars()
        if following:
            bar.setValue(bar.maximum())
        elif overflow > 0:
            bar.setValue(max(0, bar.value() - overflow))  # keep the same lines in view
        self.viewport().update()

    def replace(self, texts: list[str]) -> None:
        self.lines = list(texts[-self.max_lines:])
        self._widest = max((len(text) for text in self.lines), default=0)
        self._anchor = self._cursor = None
        self._update_scrollbars()
        self.scroll_to_bottom()

    def scroll_to_bottom(self) -> None:
        self.verticalScrollBar().setValue(self.verticalScrollBar().maximum())
        self.viewport().update()

    # --- geometry ----------------------------------------------------------------------------------

    def _line_height(self) -> int:
        return self.fontMetrics().height()

    def _visible_rows(self) -> int:
        return max(1, self.viewport().height() // max(1, self._line_height()))

    def _update_scrollbars(self) -> None:
        rows = self._visible_rows()
        vertical = self.verticalScrollBar()
        vertical.setRange(0, max(0, len(self.lines) - rows))
        vertical.setPageStep(rows)
        char_width = self.fontMetrics().horizontalAdvance("M")
        horizontal = self.horizontalScrollBar()
        horizontal.setRange(0, max(0, self._widest * char_width + 8 - self.viewport().width()))
        horizontal.setPageStep(self.viewport().width())
        horizontal.setSingleStep(char_width * 4)

    def resizeEvent(self, event) -> None:
        bar = self.verticalScrollBar()
        following = bar.value() >= bar.maximum()  # measured before the range changes with the new height
        super().resizeEvent(event)
        self._update_scrollbars()
        if following:
            bar.setValue(bar.maximum())  # a view that showed the newest line still does after shrinking

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        self.viewport().update()

    # --- painting ----------------------------------------------------------------------------------

    def paintEvent(self, event) -> None:
        painter = QPainter(self.viewport())
        height, ascent = self._line_height(), self.fontMetrics().ascent()
        first = self.verticalScrollBar().value()
        x = 4 - self.horizontalScrollBar().value()
        selected = self.selected_range()
        palette = self.palette()
        normal = palette.color(QPalette.ColorRole.Text)
        for offset, text in enumerate(self.lines[first:first + self._visible_rows() + 1]):
            top = offset * height
            if selected and selected[0] <= first + offset <= selected[1]:
                painter.fillRect(0, top, self.viewport().width(), height, palette.color(QPalette.ColorRole.Highlight))
                painter.setPen(palette.color(QPalette.ColorRole.HighlightedText))
            else:
                painter.setPen(self._pens.get(line_level(text), normal))
            painter.drawText(x, top + ascent, text)
        painter.end()

    # --- selection ---------------------------------------------------------------------------------

    def _row_at(self, y: float) -> int:
        row = self.verticalScrollBar().value() + int(y // max(1, self._line_height()))
        return min(max(row, 0), max(0, len(self.lines) - 1))

    def mousePressEvent(self, event) -> None:
        row = self._row_at(event.position().y()) + self._dropped
        if not (event.modifiers() & Qt.KeyboardModifier.ShiftModifier and self._anchor is not None):
            self._anchor = row
        self._cursor = row
        self.viewport().update()

    def mouseMoveEvent(self, event) -> None:
        if event.buttons() & Qt.MouseButton.LeftButton and self._anchor is not None:
            self._cursor = self._row_at(event.position().y()) + self._dropped
            self.viewport().update()

    def select_rows(self, first: int, last: int) -> None:
        """Select shown rows ``first``..``last`` (inclusive, 0 = oldest shown line)."""
        self._anchor, self._cursor = first + self._dropped, last + self._dropped
        self.viewport().update()

    def clear_selection(self) -> None:
        self._anchor = self._cursor = None
        self.viewport().update()

    def selected_range(self) -> tuple[int, int] | None:
        """Shown rows (first, last) of the selection, or None; lines that scrolled out are left out."""
        if self._anchor is None or self._cursor is None or not self.lines:
            return None
        first = max(min(self._anchor, self._cursor) - self._dropped, 0)
        last = min(max(self._anchor, self._cursor) - self._dropped, len(self.lines) - 1)
        return (first, last) if first <= last else None

    def selected_text(self) -> str:
        selected = self.selected_range()
        return "\n".join(self.lines[selected[0]:selected[1] + 1]) if selected else ""


def _tool_button(parent: QWidget, on_click: Callable[[], object]) -> QToolButton:
    button = QToolButton(parent)
    button.clicked.connect(on_click)
    return button


class LogPane(Retranslating, QWidget):
    """``append_lines(lines)`` takes core ``LogLine`` values or strings, on the GUI thread.

    Signals: ``saved(str path)``, ``saveFailed(str path, str reason)``.
    """

    saved = Signal(str)
    saveFailed = Signal(str, str)

    def __init__(self, parent: QWidget | None = None, *, max_lines: int = DEFAULT_MAX_LINES) -> None:
        super().__init__(parent)
        self.max_lines = max_lines
        self._history: deque[str] = deque(maxlen=max_lines)  # every line received, for re-filtering and save
        self._held: deque[str] = deque(maxlen=max_lines)  # lines that arrived while paused
        self._held_count = 0
        self._needle = ""
        self._min_level = LEVEL_INFO
        self._build()
        self.retranslate()

    # --- layout --------------------------------------------------------------------------------

    def _build(self) -> None:
        self.filter_edit = QLineEdit(self, clearButtonEnabled=True)
        self.filter_edit.setMinimumWidth(140)
        self._filter_debounce = Debouncer(self._apply_filter, 150, self)
        self.filter_edit.textChanged.connect(lambda _text: self._filter_debounce.trigger())
        self.level_combo = QComboBox(self)
        self.level_combo.addItems(["", "", ""])
        self.level_combo.currentIndexChanged.connect(lambda _i: self._apply_filter())
        guard_wheel(self.level_combo)
        self.pause_button = QToolButton(self)
        self.pause_button.setCheckable(True)
        self.pause_button.toggled.connect(self.set_paused)
        self.copy_button = _tool_button(self, self.copy_to_clipboard)
        self.save_button = _tool_button(self, self._ask_save_path)
        self.folder_button = _tool_button(self, self.open_log_folder)
        self.clear_button = _tool_button(self, self.clear)
        self.status_label = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.status_label.hide()
        self.view = LogView(self.max_lines, self)
        in_view = Qt.ShortcutContext.WidgetShortcut
        QShortcut(QKeySequence.StandardKey.Copy, self.view, self.copy_to_clipboard, context=in_view)
        QShortcut(QKeySequence.StandardKey.SelectAll, self.view,
                  lambda: self.view.select_rows(0, len(self.view.lines) - 1), context=in_view)

        self._bar_buttons = (self.pause_button, self.copy_button, self.save_button, self.folder_button,
                             self.clear_button)
        self._top_bar = QHBoxLayout()
        for widget in (self.filter_edit, self.level_combo, *self._bar_buttons):
            self._top_bar.addWidget(widget)
        self._top_bar.setStretch(0, 1)
        self._button_bar = QHBoxLayout()  # the buttons' own row when they do not fit beside the filter
        self._button_bar.addStretch(1)
        self._buttons_below = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._top_bar)
        layout.addLayout(self._button_bar)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.status_label)

    def retranslate(self) -> None:
        self.filter_edit.setPlaceholderText(self.tr("Filter lines…"))
        for index, label in enumerate((self.tr("All lines"), self.tr("Warnings and errors"), self.tr("Errors only"))):
            self.level_combo.setItemText(index, label)
        self.pause_button.setText(self.tr("Pause"))
        self.pause_button.setToolTip(self.tr("Freeze the view to read; new lines wait until you resume"))
        self.copy_button.setText(self.tr("Copy"))
        self.copy_button.setToolTip(self.tr("Copy the selected lines, or every shown line when none is selected"))
        self.save_button.setText(self.tr("Save…"))
        self.folder_button.setText(self.tr("Open log folder"))
        self.folder_button.setToolTip(self.tr("The full log of every run is kept there"))
        self.clear_button.setText(self.tr("Clear"))
        self._update_status()
        self._arrange_bar()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._arrange_bar()

    def _arrange_bar(self) -> None:
        """One row when the buttons fit beside the filter; else the buttons go on a row of their own below it,
        so a narrow column never cuts their captions ("Open…lder")."""
        spacing = max(self._top_bar.spacing(), 0)
        need = (self.filter_edit.minimumWidth() + self.level_combo.sizeHint().width()
                + sum(button.sizeHint().width() + spacing for button in self._bar_buttons) + spacing)
        below = need > self.width()
        if below == self._buttons_below:
            return
        self._buttons_below = below
        for button in self._bar_buttons:
            (self._top_bar if below else self._button_bar).removeWidget(button)
        for button in self._bar_buttons:
            if below:
                self._button_bar.insertWidget(self._button_bar.count() - 1, button)
            else:
                self._top_bar.addWidget(button)


    # --- ingest --------------------------------------------------------------------------------

    def append_lines(self, lines: Iterable[LogLine | str]) -> None:
        texts = [line_text(line) for line in lines]
        self._history.extend(texts)
        texts = texts[-self.max_lines:]  # older lines of a huge batch would scroll out unseen
        if self._needle or self._min_level:
            texts = [text for text in texts if self._accepts(text)]
        if not texts:
            return
        if self.is_paused():
            self._held.extend(texts)
            self._held_count += len(texts)
            self._update_status()
            return
        self._show(texts)

    def _show(self, texts: list[str]) -> None:
        self.view.append(texts)  # follows new lines only while scrolled to the bottom, like a terminal

    def _accepts(self, text: str) -> bool:
        if self._needle and self._needle not in text.lower():
            return False
        return not self._min_level or line_level(text) >= self._min_level

    def shown_lines(self) -> list[str]:
        return list(self.view.lines)

    def shown_line_count(self) -> int:
        return len(self.view.lines)

    def level_colour(self, row: int) -> str:
        """The colour name a shown row is painted with ("" = the palette's text colour)."""
        return LEVEL_COLOURS.get(line_level(self.view.lines[row]), "")

    # --- filter / pause ------------------------------------------------------------------------

    def set_filter(self, text: str) -> None:
        self.filter_edit.setText(text)
        self._apply_filter()

    def set_min_level(self, level: int) -> None:
        self.level_combo.setCurrentIndex(level)

    def _apply_filter(self) -> None:
        self._needle = self.filter_edit.text().strip().lower()
        self._min_level = self.level_combo.currentIndex()
        self._held.clear()
        self._held_count = 0
        self.view.replace([text for text in self._history if self._accepts(text)])
        self._update_status()

    def is_paused(self) -> bool:
        return self.pause_button.isChecked()

    def set_paused(self, paused: bool) -> None:
        if self.pause_button.isChecked() != paused:
            self.pause_button.setChecked(paused)  # comes back here through toggled
            return
        if not paused and self._held:
            held, self._held = list(self._held), deque(maxlen=self.max_lines)
            self._show(held)
        if not paused:
            self._held_count = 0
        self._update_status()

    def _update_status(self, text: str = "") -> None:
        if not text and self.is_paused():
            text = self.tr("Paused. New lines waiting: {count}").format(count=self._held_count)
        self.status_label.setText(text)
        self.status_label.setVisible(bool(text))

    def clear(self) -> None:
        self._history.clear()
        self._held.clear()
        self._held_count = 0
        self.view.replace([])
        self._update_status()

    # --- copy / save / folder ------------------------------------------------------------------

    def shown_text(self) -> str:
        """Every received line that passes the filter (including lines held back by pause)."""
        return "\n".join(text for text in self._history if self._accepts(text))

    def copy_to_clipboard(self) -> None:
        QGuiApplication.clipboard().setText(self.view.selected_text() or self.shown_text())

    def _ask_save_path(self) -> None:
        path, _filter = QFileDialog.getSaveFileName(
            self, self.tr("Save log"), "server-log.txt", self.tr("Text files (*.txt *.log)")
        )
        if path:
            self.save_to(path)

    def save_to(self, path: str | Path) -> None:
        """Write the shown lines on a pool thread; ``saved`` or ``saveFailed`` follows."""
        target = str(path)
        run_task(
            Path(target).write_text, self.shown_text() + "\n", encoding="utf-8",
            on_done=lambda _count: self.saved.emit(target),
            on_error=lambda error: self._save_failed(target, error),
            owner=self,
        )

    def _save_failed(self, path: str, error: BaseException) -> None:
        reason = getattr(error, "strerror", None) or str(error)
        self._update_status(self.tr("Could not save the log to {path}: {reason}").format(path=path, reason=reason))
        self.saveFailed.emit(path, reason)

    def open_log_folder(self) -> bool:
        return QDesktopServices.openUrl(QUrl.fromLocalFile(str(paths.log_dir())))
