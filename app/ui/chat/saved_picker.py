"""The saved-conversations drop-down: listed on a pool thread, newest first, each with the model it is with;
choosing one asks to open it."""

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
        # long titles and model names never widen the chat's toolbar; the open list is as wide as they need
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(22)
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
            self.addItem(self._label(item), item.get("id"))
        self.setToolTip(self.tr("Open a saved conversation"))
        widest = max((self.fontMetrics().horizontalAdvance(self.itemText(i)) for i in range(self.count())), default=0)
        self.view().setMinimumWidth(widest + 32)  # room for the scroll bar and the item's padding

    def _label(self, item: dict) -> str:
        """"Title · model · N messages": the model says which server would carry the conversation on."""
        title = item.get("title") or self.tr("(untitled)")
        model = item.get("model") or self.tr("no model yet")
        count = self.tr("{count} messages").format(count=item.get("messages", 0))
        return "  ·  ".join((title, model, count))

    @Slot(int)
    def _on_activated(self, index: int) -> None:
        conversation_id = self.itemData(index)
        self.setCurrentIndex(0)
        if conversation_id:
            self.conversationChosen.emit(conversation_id)
