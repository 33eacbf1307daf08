"""The Logs tab builds its pane the first time it is needed (shown, or asked for), not at start-up.

Until then the bridge's line batches wait in a deque as long as the pane itself keeps, so nothing the
user could have seen is lost. Saves the pane's import and construction (~20 ms) from the cold start.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QTabWidget, QWidget

if TYPE_CHECKING:  # types only: the pane is imported when first needed, the bridge is the window's
    from app.core.process.child_log import LogLine
    from app.ui.logs.log_pane import LogPane
    from app.ui.steps.server.supervisor_bridge import SupervisorBridge

KEEP_LINES = 10_000  # log_pane.DEFAULT_MAX_LINES, not imported here on purpose


class LazyLogs(QObject):
    def __init__(self, tabs: QTabWidget, bridge: SupervisorBridge, window: QWidget) -> None:
        super().__init__(window)
        self.tabs, self.window = tabs, window
        self.placeholder = QWidget()
        self.index = tabs.addTab(self.placeholder, "")
        self._pane: LogPane | None = None
        self._waiting: deque = deque(maxlen=KEEP_LINES)
        bridge.logLines.connect(self._on_lines)
        tabs.currentChanged.connect(self._on_tab)

    @property
    def built(self) -> bool:
        return self._pane is not None

    def pane(self) -> LogPane:
        if self._pane is None:
            from app.ui.logs.log_pane import LogPane

            pane = self._pane = LogPane(self.window)  # set first: the tab swap below re-enters _on_tab
            current = self.tabs.currentIndex()
            title = self.tabs.tabText(self.index)
            self.tabs.removeTab(self.index)
            self.tabs.insertTab(self.index, pane, title)
            self.tabs.setCurrentIndex(current)
            self.placeholder.deleteLater()
            if self._waiting:
                pane.append_lines(list(self._waiting))
                self._waiting.clear()
        return self._pane

    def add_lines(self, lines: list[LogLine | str]) -> None:
        """Lines from elsewhere than the server (the probe's test servers), in the same pane."""
        self._on_lines(lines)

    def _on_lines(self, lines: list[LogLine | str]) -> None:
        if self._pane is not None:
            self._pane.append_lines(lines)
        else:
            self._waiting.extend(lines)

    def _on_tab(self, index: int) -> None:
        if index == self.index and self._pane is None:
            self.pane()

    def retranslate(self) -> None:
        if self._pane is not None:
            self._pane.retranslate()

    def open_log_folder(self) -> None:
        self.pane().open_log_folder()
