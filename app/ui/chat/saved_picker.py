"""The saved-conversations drop-down: listed on a pool thread, newest first; choosing one asks to open it."""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QComboBox, QWidget

from app.core.chat import list_conversations
from app.ui.widgets.wheel_guard import guard_wheel
from app.ui.workers import run_task


class SavedPicker(QComboBox):
    """Item 0 is a caption ("Saved conversations (N)"); ``conversationChosen(id)`` when another is picked."""

    conversationChosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.items: list[dict] = []
        self.activated.connect(self._on_activated)
        guard_wheel(self)
        self.retranslate()

    def refresh(self) -> None:
        run_task(list_conversations, on_done=self.set_items, on_error=lambda _error: None)

    def set_items(self, items: list) -> None:
        self.items = list(items)
        self.retranslate()

    def retranslate(self) -> None:
        self.clear()
        self.addItem(self.tr("Saved conversations ({count})").format(count=len(self.items)), None)
        for item in self.items:
            title = item.get("title") or self.tr("(untitled)")
            self.addItem(f"{title}  ·  {item.get('messages', 0)}", item.get("id"))
        self.setToolTip(self.tr("Open a saved conversation"))

    @Slot(int)
    def _on_activated(self, index: int) -> None:
        conversation_id = self.itemData(index)
        self.setCurrentIndex(0)
        if conversation_id:
            self.conversationChosen.emit(conversation_id)
