"""The conversation as the user reads it: messages, notices, per-reply stats and errors with their next step.

Entries are kept as plain values so a language switch can re-render everything; while a reply streams,
deltas are inserted at the end of the document directly (no re-render per token).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtGui import QColor, QFont, QTextBlockFormat, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QTextBrowser, QWidget

from app.core.chat import ChatError, ReplyStats
from app.core.chat.conversation import INTERRUPTED, PENDING, STOPPED, UNANSWERED
from app.core.chat.errors import LOADING, SERVER_CRASHED, SERVER_ERROR, UNREACHABLE
from app.core.chat.progress import PromptProgress
from app.core.text import Text, current_language
from app.ui.widgets.problem_view import evidence_lines, next_step_text, render

MESSAGE, NOTICE, ERROR, STATS = "message", "notice", "error", "stats"
RESOLVED_BY_READY = frozenset({SERVER_CRASHED, UNREACHABLE, LOADING})  # errors a server that is Ready again solves


StoredStats = dict[str, Any]  # ReplyStats as saved with a message (ReplyStats.to_dict)


def render_text(value: Text | str | None) -> str:
    if value is None:
        return ""
    return value.render(current_language()) if isinstance(value, Text) else str(value)


def stats_from(value: ReplyStats | StoredStats | None) -> ReplyStats | None:
    """ReplyStats from the live value or from the dict saved with a message."""
    if isinstance(value, ReplyStats) or value is None:
        return value
    data = dict(value)
    fields = {k: v for k, v in data.items() if k in ReplyStats.__dataclass_fields__ and k != "request_id"}
    return ReplyStats(request_id=str(data.get("request_id", "")), **fields)


@dataclass
class Entry:
    kind: str
    role: str = ""
    content: str = ""
    status: str = ""
    value: Text | str | ChatError | ReplyStats | StoredStats | None = None  # notice, error or stats
    extra: dict = field(default_factory=dict)
    model: str | None = None  # an answer: the model that wrote it (its file name), shown in its header

    @property
    def notice(self) -> Text | str | None:
        return self.value if isinstance(self.value, (Text, str)) else None

    @property
    def stats(self) -> ReplyStats | StoredStats | None:
        return self.value if isinstance(self.value, (ReplyStats, dict)) else None

    @property
    def error(self) -> ChatError | None:
        return self.value if isinstance(self.value, ChatError) else None


def _char_format(*, colour: str | None = None, bold: bool = False, italic: bool = False,
                 small: bool = False, mono: bool = False) -> QTextCharFormat:
    fmt = QTextCharFormat()
    if colour:
        fmt.setForeground(QColor(colour))
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    fmt.setFontItalic(italic)
    if small:
        fmt.setFontPointSize(max(7.0, QFont().pointSizeF() - 1.5))
    if mono:
        fmt.setFontFamilies(["monospace"])
    return fmt


class Transcript(QTextBrowser):
    """Call ``retranslate`` after a language change: every entry is rendered again in the new language."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenExternalLinks(False)
        self.entries: list[Entry] = []
        self.role_names: dict[str, str] = {}
        self.status_notes: dict[str, str] = {}
        self._content = _char_format()
        self._header = {"user": _char_format(colour="#1565c0", bold=True),
                        "assistant": _char_format(colour="#2e7d32", bold=True)}
        self._note = _char_format(colour="#666666", italic=True, small=True)
        self._error = _char_format(colour="#c62828", bold=True)
        self._error_step = _char_format(colour="#8e0000")
        self._evidence = _char_format(colour="#666666", small=True, mono=True)
        self._thinking_since: float | None = None  # while a reply is awaited and no text has come yet
        self._thinking_at = 0  # where the "thinking…" lines start in the document (always its last lines)
        self._reading: PromptProgress | None = None  # how far the server has read the prompt, once it is sent
        self._thinking_timer = QTimer(self, interval=1000)
        self._thinking_timer.timeout.connect(self._redraw_thinking)
        self._set_words()

    # --- building -------------------------------------------------------------------------------

    def clear_all(self) -> None:
        self._thinking_since = None
        self._reading = None
        self._thinking_timer.stop()
        self.entries.clear()
        self.clear()

    # "thinking…": from send until the first piece of the answer, so a slow first answer does not look like a freeze;
    # once the prompt is sent, "Reading your message…" with how far the server has read it (where it says)

    def show_thinking(self) -> None:
        """Show "Assistant · thinking… N s" at the end until ``begin_reply`` or ``hide_thinking``."""
        if self._thinking_since is None:
            self._thinking_since = time.monotonic()
            self._render_thinking()
            self._thinking_timer.start()

    def hide_thinking(self) -> None:
        self._reading = None
        if self._thinking_since is not None:
            self._erase_thinking()
            self._thinking_since = None
            self._thinking_timer.stop()

    def show_progress(self, progress: PromptProgress) -> None:
        """The "thinking…" line says how far the prompt is read instead, until the server says it has read all of
        it (a model may then still think before it writes: "thinking…" again) or the first piece of the answer
        comes. A report without a percentage never replaces one with: a server's figure stays until the next one."""
        if self._thinking_since is None:
            return  # the answer has begun, or failed: nothing is being read any more
        if self._reading is not None and self._reading.reported and not progress.reported:
            return
        self._reading = progress
        self._redraw_thinking()

    def is_thinking(self) -> bool:
        return self._thinking_since is not None

    def thinking_text(self) -> str:
        if self._thinking_since is None:
            return ""
        elapsed = time.monotonic() - self._thinking_since
        if self._reading is not None and not self._reading.complete:  # once read, the model is thinking again
            return self._reading.sentence(elapsed).render(current_language())
        seconds = int(elapsed)
        if seconds < 1:
            return self.tr("thinking…")
        return self.tr("thinking… {seconds} s").format(seconds=seconds)

    def _render_thinking(self) -> None:
        at_bottom = self._at_bottom()
        self._thinking_at = max(0, self.document().characterCount() - 1)
        self._block(self.role_names["assistant"], self._header["assistant"], top=10)
        self._block(self.thinking_text(), self._note)
        if at_bottom:
            self._scroll_to_end()

    def _erase_thinking(self) -> None:
        cursor = QTextCursor(self.document())
        cursor.setPosition(self._thinking_at)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()

    def _redraw_thinking(self) -> None:
        if self._thinking_since is not None:
            self._erase_thinking()
            self._render_thinking()

    def add_message(self, role: str, content: str, status: str = "", model: str | None = None) -> Entry:
        entry = Entry(MESSAGE, role=role, content=content, status=status, model=model)
        self._add(entry)
        return entry

    def begin_reply(self, model: str | None = None) -> Entry:
        self.hide_thinking()  # the first piece has come
        return self.add_message("assistant", "", "streaming", model)

    def append_delta(self, entry: Entry, text: str) -> None:
        """Append streamed text to ``entry`` (which must be the last entry)."""
        entry.content += text
        if self.entries and self.entries[-1] is entry:
            at_bottom = self._at_bottom()
            cursor = QTextCursor(self.document())
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertText(text, self._content)
            if at_bottom:
                self._scroll_to_end()
        else:
            self.rerender()

    def set_status(self, entry: Entry, status: str) -> None:
        if entry.status != status:
            entry.status = status
            self.rerender()

    def add_notice(self, text: Text | str) -> None:
        self._add(Entry(NOTICE, value=text))

    def add_error(self, error: ChatError) -> None:
        self.hide_thinking()  # no answer is coming
        self._add(Entry(ERROR, value=error))

    def resolve_server_errors(self) -> None:
        """The server is Ready again: its crash (and "not reachable", "still loading") errors become one grey
        line that says it was fixed, instead of a warning whose next step no longer applies."""
        changed = False
        for entry in self.entries:
            error = entry.error
            if error is not None and error.kind in RESOLVED_BY_READY and not entry.extra.get("resolved"):
                entry.extra["resolved"] = True
                changed = True
        if changed:
            self.rerender()

    def stopped_after_solved(self) -> None:
        """The server stopped: "the server is running again" is no longer true; those lines say it was solved then."""
        changed = False
        for entry in self.entries:
            if entry.kind == ERROR and entry.extra.get("resolved") and not entry.extra.get("stopped_since"):
                entry.extra["stopped_since"] = True
                changed = True
        if changed:
            self.rerender()

    def add_stats(self, stats: ReplyStats | StoredStats) -> None:
        self.hide_thinking()
        self._add(Entry(STATS, value=stats))

    def remove_entry(self, entry: Entry) -> None:
        if entry in self.entries:
            self.entries.remove(entry)
            self.rerender()

    def _add(self, entry: Entry) -> None:
        self.entries.append(entry)
        if self._thinking_since is not None:  # a notice while waiting: above the "thinking…" lines
            self._erase_thinking()
        self._render_entry(entry)
        if self._thinking_since is not None:
            self._render_thinking()

    # --- rendering ------------------------------------------------------------------------------

    def rerender(self) -> None:
        self.clear()
        for entry in self.entries:
            self._render_entry(entry)
        if self._thinking_since is not None:
            self._render_thinking()
        self._scroll_to_end()

    def retranslate(self) -> None:
        self._set_words()
        self.rerender()

    def _set_words(self) -> None:
        self.role_names = {"user": self.tr("You"), "assistant": self.tr("Assistant")}
        self.status_notes = {
            PENDING: self.tr("not answered yet"),
            UNANSWERED: self.tr("not answered"),
            INTERRUPTED: self.tr("cut off"),
            STOPPED: self.tr("stopped"),
        }

    def stats_line(self, value: ReplyStats | StoredStats | None) -> str:
        """First-token time, tokens/s and the finish reason said plainly, for one reply."""
        stats = stats_from(value)
        if stats is None:
            return ""
        parts = []
        if stats.ttft_s is not None:
            parts.append(self.tr("first token after {seconds:.2f} s").format(seconds=stats.ttft_s))
        if stats.tokens_per_s:
            parts.append(self.tr("{rate:.1f} tokens/s").format(rate=stats.tokens_per_s))
        parts.append(stats.finish_text().render(current_language()))
        return " · ".join(parts)

    def _render_entry(self, entry: Entry) -> None:
        at_bottom = self._at_bottom()
        if entry.kind == MESSAGE:
            header = self.role_names.get(entry.role, entry.role)
            if entry.role == "assistant" and entry.model:  # every answer says which model wrote it
                header = self.tr("Assistant · {model}").format(model=entry.model)
            note = self.status_notes.get(entry.status, "")
            self._block(header + (f"  ({note})" if note else ""), self._header.get(entry.role, self._note), top=10)
            self._block(entry.content, self._content)
        elif entry.kind == NOTICE:
            self._block(render_text(entry.notice), self._note, top=4)
        elif entry.kind == STATS:
            self._block(self.stats_line(entry.stats), self._note)
        elif entry.kind != ERROR or (error := entry.error) is None:
            pass  # an error entry always holds its ChatError
        elif entry.extra.get("stopped_since"):
            self._block(self.tr("{problem} (Solved then; the server has been stopped since.)").format(
                problem=render(error.message)), self._note, top=4)
        elif entry.extra.get("resolved"):
            self._block(self.tr("{problem} (Solved: the server is running again.)").format(
                problem=render(error.message)), self._note, top=4)
        else:
            self._block("⚠ " + render(error.message), self._error, top=8)
            next_step = next_step_text(error, labelled=False)
            if next_step:
                self._block(next_step, self._error_step)
            if error.kind == SERVER_ERROR:  # its evidence is the server's own log
                for line in evidence_lines(error, last=5):
                    self._block(line, self._evidence)
        if at_bottom:
            self._scroll_to_end()

    def _block(self, text: str, fmt: QTextCharFormat, *, top: float = 0) -> None:
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        block = QTextBlockFormat()
        block.setTopMargin(top)
        if self.document().isEmpty():
            cursor.setBlockFormat(block)
        else:
            cursor.insertBlock(block)
        cursor.insertText(text, fmt)

    def _at_bottom(self) -> bool:
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - 4

    def _scroll_to_end(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())

    def plain_text(self) -> str:
        return self.toPlainText()
