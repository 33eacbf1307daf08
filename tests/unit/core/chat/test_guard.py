"""Context guard, token counter calibration, error classification and the conversation file (no server)."""

from __future__ import annotations

import json

import pytest

from app.core.chat import errors
from app.core.chat.classify import ContextOverflow, ServerLoading, classify_http
from app.core.chat.conversation import (
    ANSWERED,
    COMPLETE,
    INTERRUPTED,
    PENDING,
    STREAMING,
    Conversation,
    load_conversation,
    save_conversation,
)
from app.core.chat.guard import budget_for, fit_history
from app.core.chat.tokens import TokenCounter


def byte_counter() -> TokenCounter:
    """Counts like the tiny test models: one token per UTF-8 byte."""
    counter = TokenCounter(lambda text: list(text.encode()))
    counter.fixed, counter.per_message = 10, 5
    return counter


def history(turns: int, size: int = 50) -> list[dict[str, str]]:
    messages = [{"role": "system", "content": "S" * 20}]
    for n in range(turns):
        messages += [{"role": "user", "content": f"u{n}" + "x" * size}, {"role": "assistant", "content": "y" * size}]
    return messages + [{"role": "user", "content": "newest"}]


def test_budget_is_slot_context_minus_answer_minus_margin():
    assert budget_for(512, 64) == 512 - 64 - 77


def test_keeps_system_and_newest_turns_drops_oldest_whole_turns():
    counter = byte_counter()
    fit = fit_history(history(6), counter, 512, 64)
    assert fit.messages[0]["role"] == "system"
    assert fit.messages[-1]["content"] == "newest"
    assert fit.prompt_tokens <= fit.budget < fit.naive_prompt_tokens
    assert fit.dropped_messages % 2 == 0 and fit.dropped_messages > 0
    assert fit.messages[1]["role"] == "user"  # whole turns only
    kept_first = fit.messages[1]["content"][:2]
    assert kept_first == f"u{fit.dropped_turns}"
    assert fit.notices[0].render("en") == (
        f"{fit.dropped_messages} earlier messages are no longer sent to the model (the context is full).")


def test_everything_kept_when_it_fits():
    fit = fit_history(history(1), byte_counter(), 4096, 256)
    assert fit.dropped_messages == 0 and not fit.notices and len(fit.messages) == 4


def test_single_message_over_budget_names_both_numbers():
    big = [{"role": "user", "content": "z" * 1000}]
    with pytest.raises(errors.ChatError) as caught:
        fit_history(big, byte_counter(), 512, 64)
    error = caught.value
    assert error.kind == errors.CONTEXT_TOO_LONG
    sentence = error.message.render("en")
    assert "1015" in sentence and str(budget_for(512, 64)) in sentence
    assert "shorter message" in error.next_step.render("en")
    assert "更短" in error.next_step.render("zh")


def test_calibration_from_two_usage_counts():
    counter = TokenCounter(lambda text: list(text.encode()))
    fixed, per_message = 7, 4  # what a pretend template really costs
    counter.calibrate(lambda ms: fixed + sum(len(m["content"].encode()) + per_message for m in ms))
    assert (counter.fixed, counter.per_message) == (fixed, per_message)
    messages = history(2)
    assert counter.count_messages(messages) == fixed + sum(len(m["content"]) + per_message for m in messages)


def test_observe_raises_overhead_after_undercount_and_estimate_is_labelled():
    counter = byte_counter()
    messages = history(1)
    counted = counter.count_messages(messages)
    assert counter.observe(messages, counted + 30) == 30
    assert counted + 30 <= counter.count_messages(messages) <= counted + 40
    assert counter.observe(messages, counted) == 0
    estimating = TokenCounter(lambda text: None)
    assert estimating.count_text("abcdef") > 0 and estimating.is_estimate
    assert "estimate" in estimating.notice.render("en")


def test_http_errors_are_classified():
    body = {"error": {"code": 400, "message": "request (629 tokens) exceeds the available context size (512 tokens), "
                      "try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 629, "n_ctx": 512}}
    overflow = classify_http(400, json.dumps(body), "r1")
    assert isinstance(overflow, ContextOverflow) and (overflow.n_prompt_tokens, overflow.n_ctx) == (629, 512)
    lcp = {"error": {"message": "This model's maximum context length is 512 tokens. However, you requested 700 tokens "
                     "(600 in the messages, 100 in the completion). Please reduce the length of the messages or "
                     "completion.", "type": "invalid_request_error", "param": "messages",
                     "code": "context_length_exceeded"}}
    overflow = classify_http(400, json.dumps(lcp), "r2")
    assert (overflow.n_prompt_tokens, overflow.n_ctx) == (600, 512)
    assert isinstance(classify_http(503, '{"error":{"message":"Loading model","code":503}}', "r"), ServerLoading)
    assert classify_http(401, '{"error":{"message":"Invalid API Key"}}', "r").kind == errors.AUTH
    failure = classify_http(500, '{"error":{"message":"boom"}}', "r9", log_tail=lambda n: ["last log line"])
    assert failure.kind == errors.SERVER_ERROR and failure.request_id == "r9"
    assert "last log line" in failure.evidence and "boom" in failure.message.render("en")


def test_conversation_file_round_trip_and_interrupted_answer(tmp_path):
    conversation = Conversation()
    conversation.add("user", "first", ANSWERED)
    conversation.add("assistant", "one", COMPLETE)
    conversation.add("user", "second", PENDING)
    conversation.add("assistant", "half an ans", STREAMING)
    save_conversation(conversation, tmp_path)
    loaded = load_conversation(conversation.id, tmp_path)
    assert [m.status for m in loaded.messages] == [ANSWERED, COMPLETE, PENDING, INTERRUPTED]
    assert loaded.pending_message().content == "second"
    assert [m["content"] for m in loaded.history_for_model()] == ["first", "one", "second"]
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_memory_warning_trims_older_turns_to_a_share_of_the_budget_but_keeps_the_newest():
    counter, messages = byte_counter(), history(12)
    full = fit_history(messages, counter, 2048, 64)
    tight = fit_history(messages, counter, 2048, 64, history_share=0.4)
    assert full.dropped_turns < tight.dropped_turns and tight.prompt_tokens <= 0.4 * full.budget + 100
    assert tight.messages[-1]["content"] == "newest" and tight.messages[0]["role"] == "system"
    alone = fit_history(messages, counter, 2048, 64, history_share=0.0)  # nothing but the newest message
    assert [m["content"] for m in alone.messages if m["role"] != "system"] == ["newest"]
    assert fit_history(messages, counter, 2048, 64, history_share=1.0) == full
