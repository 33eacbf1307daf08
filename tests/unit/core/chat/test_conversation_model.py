"""Each conversation belongs to a model and every answer records the model that wrote it."""

from __future__ import annotations

from app.core.chat.conversation import (
    ANSWERED,
    COMPLETE,
    Conversation,
    list_conversations,
    load_conversation,
    new_model_notice,
    other_model_notice,
    save_conversation,
)


def test_answers_record_their_model_and_it_is_saved(tmp_path):
    conversation = Conversation()
    assert conversation.model is None and conversation.belongs_to("/m/a.gguf")
    conversation.set_model("/m/a.gguf")
    conversation.add("user", "hi", ANSWERED)
    first = conversation.add("assistant", "hello", COMPLETE)
    assert first.model == "a.gguf" and conversation.messages[0].model is None  # the user's message has none
    assert conversation.belongs_to("/m/a.gguf") and not conversation.belongs_to("/m/b.gguf")
    conversation.set_model(None)  # no server is no other model
    assert conversation.model_path == "/m/a.gguf"

    save_conversation(conversation, tmp_path)
    again = load_conversation(conversation.id, tmp_path)
    assert again.model_path == "/m/a.gguf" and again.messages[1].model == "a.gguf"
    assert list_conversations(tmp_path)[0]["model"] == "a.gguf"


def test_a_conversation_saved_before_models_were_recorded_still_opens(tmp_path):
    old = {"version": 1, "id": "old", "title": "t", "messages": [
        {"role": "user", "content": "hi", "status": ANSWERED},
        {"role": "assistant", "content": "hello", "status": COMPLETE}]}
    conversation = Conversation.from_dict(old)
    assert conversation.model_path is None and conversation.messages[1].model is None
    assert conversation.belongs_to("/m/b.gguf")  # nothing says otherwise: the running model carries it on


def test_the_switch_notices_name_both_models_in_both_languages():
    for notice in (new_model_notice("a.gguf", "b.gguf"), other_model_notice("a.gguf", "b.gguf")):
        for lang in ("en", "zh"):
            assert "a.gguf" in notice.render(lang) and "b.gguf" in notice.render(lang)
