"""Offers to stop model servers left running by an earlier session of the app that crashed or was killed.

Such a server still holds RAM/VRAM and often the port, which is why the next start fails in puzzling ways.
Finding and stopping them are core calls (app.core.process.registry), run off the GUI thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QHBoxLayout, QPushButton, QWidget

from app.ui import workers
from app.ui.i18n import Retranslating
from app.ui.widgets.banner import Banner

if TYPE_CHECKING:
    from app.core.process.registry import StaleChild


def stop_all(children: list[StaleChild]) -> int:
    """Stop each stale server (pid, start time and command line verified first); returns how many stopped."""
    from app.core.process.registry import kill_stale_child

    return sum(1 for child in children if kill_stale_child(child))


class StaleServersBanner(Retranslating, Banner):
    """The window's notice banner (label + close button) with a "Stop it" button before the close button."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.children_found: list[StaleChild] = []
        self.stop_button = QPushButton(self)
        self.stop_button.clicked.connect(self.stop_them)
        layout = self.layout()
        assert isinstance(layout, QHBoxLayout)  # the banner's row: its text, then this button, then its close
        layout.insertWidget(1, self.stop_button)
        self.retranslate()

    def look_for_stale_servers(self) -> None:
        from app.core.process.registry import find_stale_children  # after the window's first paint (start)

        workers.run_task(find_stale_children, on_done=self.show_children, on_error=lambda _exc: None, owner=self)

    def show_children(self, children: list[StaleChild]) -> None:
        self.children_found = list(children)
        if not self.children_found:
            self.hide()
            return
        self.stop_button.setEnabled(True)
        self._describe()
        self.show()

    def stop_them(self) -> None:
        self.stop_button.setEnabled(False)
        workers.run_task(stop_all, list(self.children_found), on_done=self._stopped,
                         on_error=lambda _exc: self._stopped(0), owner=self)

    def _stopped(self, count: int) -> None:
        remaining = len(self.children_found) - count
        self.children_found = self.children_found[count:] if remaining else []
        if remaining:
            self.label.setText(self.tr("Could not stop process %1; close it in your task manager.")
                               .replace("%1", ", ".join(str(c.pid) for c in self.children_found)))
            self.stop_button.setEnabled(True)
        else:
            self.label.setText(self.tr("Stopped. Their memory and ports are free again."))
            self.stop_button.hide()

    def _describe(self) -> None:
        pids = ", ".join(str(c.pid) for c in self.children_found)
        self.label.setText(self.tr(
            "A model server from an earlier session is still running (process %1). It holds memory and may hold "
            "the port, so a new start can fail.").replace("%1", pids))


    def retranslate(self) -> None:
        self.stop_button.setText(self.tr("Stop it"))
        if self.children_found and self.stop_button.isEnabled():
            self._describe()
