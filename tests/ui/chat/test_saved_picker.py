"""The saved-conversations picker names each conversation's model (issue 11: each conversation belongs to a model),
in both languages."""

from __future__ import annotations

from app.ui.chat.saved_picker import SavedPicker
from app.ui.i18n import apply_language

ITEMS = [
    {"id": "a", "title": "Trip plans", "messages": 4, "model": "SmolLM2-135M-Instruct.Q4_1.gguf"},
    {"id": "b", "title": "", "messages": 0, "model": None},
]


def test_each_saved_conversation_shows_its_model_and_message_count(qtbot):
    picker = SavedPicker()
    qtbot.addWidget(picker)
    picker.set_items(ITEMS)
    assert picker.count() == 3 and picker.itemText(0) == "Saved conversations (2)"
    assert picker.itemText(1) == "Trip plans  ·  SmolLM2-135M-Instruct.Q4_1.gguf  ·  4 messages"
    assert picker.itemText(2) == "(untitled)  ·  no model yet  ·  0 messages"
    assert [picker.itemData(i) for i in range(3)] == [None, "a", "b"]
    try:
        apply_language("zh")
        picker.retranslate()
        assert picker.itemText(1) == "Trip plans  ·  SmolLM2-135M-Instruct.Q4_1.gguf  ·  4 条消息"
        assert "尚无模型" in picker.itemText(2)
    finally:
        apply_language("en")
        picker.retranslate()


def test_a_long_title_does_not_widen_the_picker_but_the_open_list_shows_it_whole(qtbot):
    picker = SavedPicker()
    qtbot.addWidget(picker)
    picker.set_items(ITEMS[1:])
    narrow = picker.sizeHint().width()
    long_one = {"id": "c", "title": "A very long conversation title " * 4, "messages": 9, "model": "m.gguf"}
    picker.set_items([long_one])
    assert picker.sizeHint().width() == narrow
    assert picker.view().minimumWidth() > picker.fontMetrics().horizontalAdvance(long_one["title"])
