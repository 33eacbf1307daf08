"""The Chat tab, loaded after the first paint.

F2's chat pane pulls in the HTTP client stack (httpx, ~0.25 s of imports); importing it in a worker
while the window is already on screen keeps start-up close to a bare Qt window. Until it arrives the
tab shows a placeholder, and the helpers below treat the placeholder as "not streaming".
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QLabel, QWidget

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
        self.retranslate()

    def retranslate(self) -> None:
        self.setText(QCoreApplication.translate("", "Loading the chat…"))


def placeholder(parent: QWidget) -> ChatPlaceholder:
    return ChatPlaceholder(parent)


def load_chat_pane(bridge: SupervisorBridge, parent: QWidget, on_ready: Callable[[ChatPane], None],
                   on_error: Callable[[BaseException], None]) -> None:
    """Import the chat module off the GUI thread, then build the pane on it."""
    def build(module: ModuleType) -> None:
        if shiboken6.isValid(parent):  # the window may have closed while the import ran
            on_ready(module.ChatPane(bridge, parent))

    run_task(importlib.import_module, "app.ui.chat.chat_pane", on_done=build, on_error=on_error)


def is_streaming(chat: ChatPane | ChatPlaceholder) -> bool:
    return not isinstance(chat, ChatPlaceholder) and chat.is_streaming()


def shutdown(chat: ChatPane | ChatPlaceholder) -> None:
    if not isinstance(chat, ChatPlaceholder):
        chat.shutdown()
