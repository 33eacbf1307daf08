"""Rows of check results: a status icon, the sentence, the next step, and a fix button when one exists.

Passed checks fold behind one summary line ("11 checks passed · Show details") so a clean model takes one
line; warnings and errors always show, each with its next step. A folding list leads with its failures: the
rows come failures first (core's ``failures_first``) and the summary of a list with a failure says what failed
(core's ``failed_summary``), never a green "16 of 17 checks passed" above the bad news. A short list
(``fold_passed=False``, the Machine step's engine row) shows every row, as given, without the summary line.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtWidgets import QGridLayout, QLabel, QPushButton, QToolButton, QWidget

from app.core.problem import Check
from app.ui.widgets import look
from app.ui.widgets.problem_view import evidence_text, fix_button_text, problem_text, render
from app.ui.widgets.status_icon import StatusIcon


def _status(check: Check) -> str:
    return check.status.value


def _status_word(status: str) -> str:
    """The icon's tooltip: what the colour means, in the user's language."""
    if status == "ok":
        return QCoreApplication.translate("CheckList", "Passed")
    if status == "warning":
        return QCoreApplication.translate("CheckList", "Warning")
    return QCoreApplication.translate("CheckList", "Problem")


class CheckList(QWidget):
    fixRequested = Signal(object)  # the Check whose fix button was pressed

    def __init__(self, parent: QWidget | None = None, *, fold_passed: bool = True) -> None:
        """``fold_passed=False``: every row shows, with no summary line (a list of one or two checks)."""
        super().__init__(parent)
        self.fold_passed = fold_passed
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 2, 0, 2)
        self._grid.setHorizontalSpacing(8)
        self._grid.setVerticalSpacing(3)
        self._grid.setColumnStretch(1, 1)
        self._checks: list[Check] = []
        self.expanded = False
        self.rows: list[tuple[StatusIcon, QLabel, QPushButton | None]] = []
        self.summary_icon = StatusIcon("ok", 16, self)
        self.summary = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        look.good(self.summary)
        self.details = QToolButton(self)
        self.details.setAutoRaise(True)
        self.details.clicked.connect(self._toggle)

    @property
    def checks(self) -> list[Check]:
        return list(self._checks)

    def set_checks(self, checks: list[Check]) -> None:
        from app.core.gguf.check_order import failures_first  # the gguf package: with a model's checks, not at start-up

        self._checks = failures_first(checks) if self.fold_passed else list(checks)
        self._clear()
        self._grid.addWidget(self.summary_icon, 0, 0, Qt.AlignmentFlag.AlignTop)
        self._grid.addWidget(self.summary, 0, 1)
        self._grid.addWidget(self.details, 0, 2, Qt.AlignmentFlag.AlignTop)
        for row, check in enumerate(self._checks, start=1):
            self._add_row(row, check)
        self._render_fold()

    def set_busy(self, busy: bool) -> None:
        for _, _, button in self.rows:
            if button is not None:
                button.setEnabled(not busy)

    def _toggle(self) -> None:
        self.expanded = not self.expanded
        self._render_fold()

    def _render_fold(self) -> None:
        passed = sum(1 for c in self._checks if _status(c) == "ok")
        total = len(self._checks)
        for widget in (self.summary_icon, self.summary, self.details):
            widget.setVisible(passed > 0 and self.fold_passed)
        from app.core.gguf.check_order import failed_summary

        failed = failed_summary(self._checks)
        if failed is not None:
            self.summary_icon.setVisible(self.fold_passed)
            self.summary.setVisible(self.fold_passed)
        self.summary_icon.set_status("error" if failed is not None else "ok")
        self._summary_look(good=failed is None)
        if failed is not None:
            summary = failed.render()
        elif passed == total:
            summary = QCoreApplication.translate("CheckList", "All {n} checks passed.").format(n=total)
        else:
            summary = QCoreApplication.translate("CheckList", "{n} of {total} checks passed.").format(
                n=passed, total=total)
        self.summary.setText(summary)
        hide, show = (QCoreApplication.translate("CheckList", "Hide details"),
                      QCoreApplication.translate("CheckList", "Show details"))
        self.details.setText(hide if self.expanded else show)
        for check, (icon, label, button) in zip(self._checks, self.rows, strict=True):
            shown = self.expanded or not self.fold_passed or _status(check) != "ok"
            for widget in (icon, label, button):
                if widget is not None:
                    widget.setVisible(shown)

    def _summary_look(self, good: bool) -> None:
        """Green for good news only; a summary of failures is bold in the text colour, beside a red icon."""
        if good:
            look.good(self.summary)
        else:
            self.summary.setPalette(self.palette())
        font = self.summary.font()
        font.setBold(not good)
        self.summary.setFont(font)

    def _clear(self) -> None:
        for icon, label, button in self.rows:
            for widget in (icon, label, button):
                if widget is not None:
                    self._grid.removeWidget(widget)
                    widget.hide()  # deleteLater waits for the event loop: until then the old row would still paint
                    widget.deleteLater()
        self.rows = []

    def _add_row(self, row: int, check: Check) -> None:
        status = _status(check)
        icon = StatusIcon(status, 16, self)
        icon.setToolTip(_status_word(status))
        text = problem_text(check) if status != "ok" else render(check.message)
        label = QLabel(text, self, textFormat=Qt.TextFormat.PlainText)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setObjectName(f"check-{check.id}")
        if check.evidence:
            label.setToolTip(evidence_text(check))
        self._grid.addWidget(icon, row, 0, Qt.AlignmentFlag.AlignTop)
        self._grid.addWidget(label, row, 1, Qt.AlignmentFlag.AlignTop)  # level with the icon when a button is taller
        button = None
        if fix_button_text(check.action) and status != "ok":
            button = QPushButton(fix_button_text(check.action), self)
            button.clicked.connect(lambda _=False, c=check: self.fixRequested.emit(c))
            self._grid.addWidget(button, row, 2, Qt.AlignmentFlag.AlignTop)
        self.rows.append((icon, label, button))
