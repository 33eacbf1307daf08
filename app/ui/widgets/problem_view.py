"""The one way the window shows a problem: a check, a user error, a chat error or a crash diagnosis.

All four carry the core's problem shape (``app.core.problem.Problem``: ``message``, ``next_step``, ``evidence``,
``action``), so every place reads the same four fields through the functions here: the check rows, the crash card,
the chat's error lines, the probe and rebuild boxes, the Settings preview and the server's error label.
``ProblemView`` is the widget form (sentence, next step, the evidence lines behind a toggle).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, Qt, Slot
from PySide6.QtWidgets import QLabel, QToolButton, QVBoxLayout, QWidget

from app.core.problem import Fix, FixAction, Problem
from app.core.text import Text, current_language

if TYPE_CHECKING:
    from PySide6.QtWidgets import QPlainTextEdit


def render(text: Text | None) -> str:
    """A core sentence in the app's language ('' for None)."""
    return text.render(current_language()) if text is not None else ""


def next_step_text(problem: Problem, *, labelled: bool = True) -> str:
    """The next step, as "Next step: …" (``labelled``) or bare; '' when the problem has none."""
    step = render(problem.next_step)
    if not step or not labelled:
        return step
    return QCoreApplication.translate("ProblemView", "Next step: {fix}").format(fix=step)


def problem_text(problem: Problem, *, labelled: bool = True, joiner: str = "\n") -> str:
    """The sentence and the next step as one text (a check row, an error label, a status line)."""
    return joiner.join(part for part in (render(problem.message), next_step_text(problem, labelled=labelled)) if part)


def evidence_lines(problem: Problem, last: int | None = None) -> list[str]:
    """The evidence behind the sentence (log lines, file facts), the ``last`` few when given."""
    lines = [str(line) for line in problem.evidence]
    return lines[-last:] if last else lines


def evidence_text(problem: Problem, last: int | None = None) -> str:
    return "\n".join(evidence_lines(problem, last))


def fix_button_text(action: FixAction | None) -> str:
    """The label of the button that applies ``action``; '' when the sentence says what to do instead."""
    kind = action.kind if action is not None else None
    if kind is Fix.COPY_TO_SAFE_PATH:
        return QCoreApplication.translate("ProblemView", "Copy to a safe folder")
    if kind is Fix.USE_FIRST_SHARD:
        return QCoreApplication.translate("ProblemView", "Open the first part")
    if kind is Fix.REBUILD_ENGINE:
        return QCoreApplication.translate("ProblemView", "Rebuild the engine for this processor")
    if kind is Fix.SWITCH_ENGINE:
        if action is not None and action.get("engine") == "llama-server":
            return QCoreApplication.translate("ProblemView", "Use the llama-server engine")
        return QCoreApplication.translate("ProblemView", "Use the built-in engine")
    if kind is Fix.TEST_ENGINE:
        return QCoreApplication.translate("ProblemView", "Test the engine")
    return ""  # no button: the sentence says what to do (e.g. download the missing parts)


class ProblemView(QWidget):
    """A problem as widgets: ``message``, an optional ``detail`` line, ``next_step`` (bare: the card around it says
    what it is), and the evidence lines folded behind ``evidence_toggle``.

    ``folded``: only the sentence and the next step are shown; the detail line, what a surrounding card adds with
    ``add_before_evidence`` and the evidence lines sit in ``details``, a widget the surrounding card places where it
    likes (under its buttons), shut until ``details_toggle`` (also the card's to place) opens it."""

    def __init__(self, parent: QWidget | None = None, *, folded: bool = False) -> None:
        super().__init__(parent)
        self.folded = folded
        self.problem: Problem | None = None
        self._evidence_title: Callable[[int], str] = lambda count: f"({count})"
        selectable = Qt.TextInteractionFlag.TextSelectableByMouse
        self.message = QLabel(self, wordWrap=True, textInteractionFlags=selectable, textFormat=Qt.TextFormat.PlainText)
        self.detail = QLabel(self, wordWrap=True, textInteractionFlags=selectable, textFormat=Qt.TextFormat.PlainText)
        self.detail.setStyleSheet("color: #555;")
        self.next_step = QLabel(self, wordWrap=True, textInteractionFlags=selectable,
                                textFormat=Qt.TextFormat.PlainText)
        self.evidence_toggle = QToolButton(self, toolButtonStyle=Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.evidence_toggle.setCheckable(True)
        self.evidence_toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.evidence_toggle.toggled.connect(self._show_evidence)
        self._evidence: QPlainTextEdit | None = None  # built when there are lines to show (``evidence``)
        self.details = QWidget(self)  # folded: what the details toggle opens
        self.details_toggle = QToolButton(self, autoRaise=True,
                                          toolButtonStyle=Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.details_toggle.setCheckable(True)
        self.details_toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.details_toggle.toggled.connect(self._show_details)
        outer = self._outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(4 if folded else outer.spacing())
        for widget in (self.message, self.next_step) if folded else (self.message, self.detail, self.next_step):
            outer.addWidget(widget)
        if folded:
            self._layout = QVBoxLayout(self.details)
            self._layout.setContentsMargins(0, 0, 0, 0)
            self._layout.setSpacing(4)
            self._layout.addWidget(self.detail)
            self.details.hide()
        else:
            self._layout = outer
            self.details.hide()
            self.details_toggle.hide()
        self._layout.addWidget(self.evidence_toggle)  # the evidence box goes right under it once it is built

    @property
    def evidence(self) -> QPlainTextEdit:
        """The evidence lines, under their toggle; built on first use: a window whose notices have no evidence yet
        paints without loading the text editor's class."""
        if self._evidence is None:
            from PySide6.QtWidgets import QPlainTextEdit

            box = QPlainTextEdit(self, readOnly=True)
            box.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
            box.setMaximumHeight(140)
            box.setVisible(self.evidence_toggle.isChecked())
            self._layout.insertWidget(self._layout.indexOf(self.evidence_toggle) + 1, box)
            self._evidence = box
        return self._evidence

    def add_before_evidence(self, *widgets: QWidget) -> None:
        """Place widgets of the surrounding card (what a fix changes, a progress box) above the evidence toggle."""
        at = self._layout.indexOf(self.evidence_toggle)
        for offset, widget in enumerate(widgets):
            self._layout.insertWidget(at + offset, widget)

    def set_problem(self, problem: Problem | None, *, generic: str = "", detail: str = "",
                    evidence_title: Callable[[int], str] | None = None) -> None:
        """Show ``problem`` (``generic`` is the sentence when there is none); ``detail`` goes under the sentence;
        ``evidence_title(count)`` labels the evidence toggle."""
        self.problem = problem
        if evidence_title is not None:
            self._evidence_title = evidence_title
        self.message.setText((render(problem.message) if problem is not None else "") or generic)
        self._set_optional(self.detail, detail)
        self._set_optional(self.next_step, next_step_text(problem, labelled=False) if problem is not None else "")
        lines = evidence_lines(problem) if problem is not None else []
        if lines or self._evidence is not None:
            self.evidence.setPlainText("\n".join(lines))
        self.evidence_toggle.setText(self._evidence_title(len(lines)))
        self.evidence_toggle.setVisible(bool(lines))
        if self.folded:
            self.render_details_toggle()

    def fold_next_step(self, folded: bool) -> None:
        """Folded view: the next step under "Show details" (a card's fix button takes it) or under the sentence."""
        outer = self._outer
        if not self.folded or (outer.indexOf(self.next_step) < 0) == folded:
            return
        (outer if folded else self._layout).removeWidget(self.next_step)
        if folded:
            self._layout.insertWidget(1, self.next_step)  # under the exit meaning
        else:
            outer.insertWidget(1, self.next_step)  # under the sentence
        self.render_details_toggle()

    @staticmethod
    def _set_optional(label: QLabel, text: str) -> None:
        label.setText(text)
        label.setVisible(bool(text))

    def has_details(self) -> bool:
        """Folded: the details hold something to show (the detail line, evidence, a card's own lines)."""
        layout = self._layout
        items = (layout.itemAt(i) for i in range(layout.count()))
        widgets = (item.widget() for item in items if item is not None)
        return any(widget is not None and not widget.isHidden() for widget in widgets)

    def render_details_toggle(self) -> None:
        shown = self.details_toggle.isChecked()
        self.details_toggle.setText(QCoreApplication.translate("ProblemView", "Hide details") if shown
                                    else QCoreApplication.translate("ProblemView", "Show details"))
        self.details_toggle.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self.details_toggle.setVisible(self.has_details())

    @Slot(bool)
    def _show_details(self, shown: bool) -> None:
        self.details.setVisible(shown)
        self.render_details_toggle()

    @Slot(bool)
    def _show_evidence(self, shown: bool) -> None:
        if shown and self.folded:
            self.details_toggle.setChecked(True)  # the evidence is inside the details
        self.evidence.setVisible(shown)
        self.evidence_toggle.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
