"""The Chat tab (``ChatTab``): a placeholder until the chat pane is loaded after the first paint, then the pane.

F2's chat pane pulls in the HTTP client stack (httpx, ~0.25 s of imports); importing it in a worker
while the window is already on screen keeps start-up close to a bare Qt window. The tab owns the swap: the window
asks it, typed, for the pane (``pane``: None until it is loaded) and never probes what the tab shows.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.ui.i18n import Retranslating
from app.ui.workers import run_task

if TYPE_CHECKING:  # the types only: importing the pane is what this module puts off
    from app.ui.chat.chat_pane import ChatPane
    from app.ui.steps.server.supervisor_bridge import SupervisorBridge


class ChatPlaceholder(Retranslating, QLabel):
    """Stands in the Chat tab until the real pane is built (after the first paint)."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setObjectName("hint")
        self._error: BaseException | None = None
        self.retranslate()

    def show_failure(self, error: BaseException) -> None:
        self._error = error
        self.retranslate()

    def retranslate(self) -> None:
        if self._error is None:
            self.setText(QCoreApplication.translate("", "Loading the chat…"))
        else:
            self.setText(self.tr("The chat could not be loaded: {error}").format(error=self._error))


class ChatTab(Retranslating, QWidget):
    """The Chat tab's page. ``paneReady(ChatPane)``: the pane replaced the placeholder (once)."""

    paneReady = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._pane: ChatPane | None = None
        self.placeholder: ChatPlaceholder | None = ChatPlaceholder(self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)  # the page is the pane's (or the placeholder's) own
        layout.addWidget(self.placeholder)

    @property
    def pane(self) -> ChatPane | None:
        """The chat pane, once loaded (None before: the placeholder is shown)."""
        return self._pane

    def shown(self) -> ChatPane | ChatPlaceholder:
        """What the tab shows now."""
        if self._pane is not None:
            return self._pane
        assert self.placeholder is not None  # one of the two is always there
        return self.placeholder

    def load(self, bridge: SupervisorBridge) -> None:
        """Import the chat module off the GUI thread, then build the pane on it (following ``bridge``)."""
        def build(module: ModuleType) -> None:
            self.set_pane(module.ChatPane(bridge, self))

        run_task(importlib.import_module, "app.ui.chat.chat_pane", on_done=build, on_error=self._load_failed,
                 owner=self)  # the window may close while the import runs: then nothing is built

    def set_pane(self, pane: ChatPane) -> None:
        old, self.placeholder, self._pane = self.placeholder, None, pane
        layout = self.layout()
        assert layout is not None
        if old is not None:
            layout.removeWidget(old)
            old.deleteLater()
        layout.addWidget(pane)
        self.paneReady.emit(pane)

    def _load_failed(self, error: BaseException) -> None:
        if self.placeholder is not None:
            self.placeholder.show_failure(error)

    # --- what the window asks of the chat, whichever is shown -------------------------------------

    def is_streaming(self) -> bool:
        return self._pane is not None and self._pane.is_streaming()

    def shutdown(self) -> None:
        if self._pane is not None:
            self._pane.shutdown()

    def set_memory_short(self, short: bool) -> None:
        if self._pane is not None:  # before the pane arrives there is no chat to shorten
            self._pane.set_memory_short(short)

    def retranslate(self) -> None:
        self.shown().retranslate()
