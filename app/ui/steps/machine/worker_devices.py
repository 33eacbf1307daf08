"""The Machine step's rows for llama.cpp workers: each worker the Settings step lists, as one more device.

``worker_checks()`` is the window's one hub of worker checks: the Settings step's workers list publishes each
round of checks there, and every ``WorkerDevices`` shows the latest one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.ui.i18n import Retranslating
from app.ui.widgets import look

if TYPE_CHECKING:  # the type only: the worker protocol loads with the first check, not with the window
    from app.core.rpc.check import WorkerCheck


class WorkerChecks(QObject):
    """Signal ``changed(tuple[WorkerCheck, ...])``; ``latest`` is the last round."""

    changed = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.latest: tuple[WorkerCheck, ...] = ()

    def publish(self, checks: tuple[WorkerCheck, ...]) -> None:
        self.latest = tuple(checks)
        self.changed.emit(self.latest)


_hub: WorkerChecks | None = None


def worker_checks() -> WorkerChecks:
    global _hub
    if _hub is None:
        _hub = WorkerChecks()
    return _hub


class WorkerDevices(Retranslating, QWidget):
    """A heading and one line per worker (its check's sentence); hidden while there is none."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.heading = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.rows = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.rows.setWordWrap(True)
        look.hint(self.rows)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.heading)
        layout.addWidget(self.rows)
        worker_checks().changed.connect(self.show_checks)
        self.checks: tuple[WorkerCheck, ...] = ()
        self.show_checks(worker_checks().latest)

    def show_checks(self, checks: tuple[WorkerCheck, ...]) -> None:
        self.checks = tuple(checks)
        self.setVisible(bool(self.checks))
        self.retranslate()

    def retranslate(self) -> None:
        self.heading.setText(self.tr("Other computers (workers)"))
        self.rows.setText("\n".join(("✓ " if c.usable else "✗ ") + c.sentence().render() for c in self.checks))
