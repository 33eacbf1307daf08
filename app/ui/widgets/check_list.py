"""Rows of check results: a status icon, the sentence, the next step, and a fix button when one exists."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtWidgets import QGridLayout, QLabel, QPushButton, QWidget

from app.ui.widgets.status_icon import StatusIcon

def fix_button_text(fix_action: dict[str, Any] | None) -> str:
    action = (fix_action or {}).get("action", "")
    if action == "copy_to_safe_path":
        return QCoreApplication.translate("CheckList", "Copy to a safe folder")
    if action == "use_first_shard":
        return QCoreApplication.translate("CheckList", "Open the first part")
    return ""  # no button: the sentence says what to do (e.g. download the missing parts)


class CheckList(QWidget):
    fixRequested = Signal(object)  # the Check whose fix button was pressed

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 2, 0, 2)
        self._grid.setHorizontalSpacing(8)
        self._grid.setVerticalSpacing(3)
        self._grid.setColumnStretch(1, 1)
        self._checks: list[Any] = []
        self.rows: list[tuple[StatusIcon, QLabel, QPushButton | None]] = []

    @property
    def checks(self) -> list[Any]:
        return list(self._checks)

    def set_checks(self, checks: list[Any]) -> None:
        self._checks = list(checks)
        self._clear()
        for row, check in enumerate(self._checks):
            self._add_row(row, check)

    def set_busy(self, busy: bool) -> None:
        for _, _, button in self.rows:
            if button is not None:
                button.setEnabled(not busy)

    def _clear(self) -> None:
        while self._grid.count():
            widget = self._grid.takeAt(0).widget()
            if widget is not None:
                widget.deleteLater()
        self.rows = []

    def _add_row(self, row: int, check: Any) -> None:
        status = getattr(check.status, "value", str(check.status))
        icon = StatusIcon(status, 16, self)
        icon.setToolTip(status)
        text = check.message.render()
        if check.fix is not None and status != "ok":
            text += "\n" + QCoreApplication.translate("CheckList", "Next step: {fix}").format(fix=check.fix.render())
        label = QLabel(text, self)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setObjectName(f"check-{check.id}")
        if check.evidence:
            label.setToolTip("\n".join(check.evidence))
        self._grid.addWidget(icon, row, 0, Qt.AlignmentFlag.AlignTop)
        self._grid.addWidget(label, row, 1)
        button = None
        if fix_button_text(check.fix_action) and status != "ok":
            button = QPushButton(fix_button_text(check.fix_action), self)
            button.clicked.connect(lambda _=False, c=check: self.fixRequested.emit(c))
            self._grid.addWidget(button, row, 2, Qt.AlignmentFlag.AlignTop)
        self.rows.append((icon, label, button))
