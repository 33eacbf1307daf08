"""Every answer is labelled with its model; a server for another model starts a new conversation."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from app.core.chat.conversation import ANSWERED, COMPLETE, Conversation
from app.core.text import set_language
from app.ui.chat.chat_pane import ChatPane
from app.ui.chat.transcript import Transcript


@pytest.fixture
def pane(qtbot):
    widget = ChatPane()
    qtbot.addWidget(widget)
    return widget


def test_each_answer_header_names_its_model(qtbot):
    transcript = Transcript()
    qtbot.addWidget(transcript)
    transcript.add_message("user", "hi")
    transcript.add_message("assistant", "hello", model="a.gguf")
    transcript.add_message("assistant", "old answer")  # saved before answers named their model
    lines = transcript.plain_text().splitlines()
    assert "Assistant · a.gguf" in lines and "Assistant" in lines and "You" in lines


def test_a_live_answer_is_labelled_with_the_server_model(pane):
    pane.follow_model("/models/a.gguf")
    pane._on_event(SimpleNamespace(kind="delta", text="Hello"))
    assert "Assistant · a.gguf" in pane.transcript.plain_text()


def test_a_server_for_another_model_starts_a_new_conversation(pane):
    pane.follow_model("/models/a.gguf")
    pane.conversation.add("user", "hi", ANSWERED)
    pane.conversation.add("assistant", "hello", COMPLETE)
    first = pane.conversation
    pane.follow_model("/models/a.gguf")  # a restart of the same model carries on
    assert pane.conversation is first

    pane.follow_model("/models/b.gguf")
    assert pane.conversation is not first and pane.conversation.model_path == "/models/b.gguf"
    assert pane.conversation.messages == []
    assert "A new conversation with b.gguf. The one with a.gguf is kept" in pane.transcript.plain_text()
    set_language("zh")
    try:
        pane.transcript.retranslate()
        assert "与 b.gguf 的新对话" in pane.transcript.plain_text()
    finally:
        set_language("en")
        pane.transcript.retranslate()


def test_a_saved_conversation_with_another_model_says_who_answers_now(pane):
    pane.follow_model("/models/b.gguf")
    saved = Conversation(model_path="/models/a.gguf")
    saved.add("user", "hi", ANSWERED)
    saved.add("assistant", "hello", COMPLETE)
    saved.messages[1].model = "a.gguf"
    pane._show_conversation(saved)
    text = pane.transcript.plain_text()
    assert "Assistant · a.gguf" in text and "from now on b.gguf answers" in text
    assert saved.model_path == "/models/b.gguf"  # the next answer is b's, and says so
    assert saved.add("assistant", "more", COMPLETE).model == "b.gguf"
