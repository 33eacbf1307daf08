"""A "length" finish told apart: the answer's maximum length, or a full context (issue 22: a full context was
called "cut at max tokens (512)"). What real servers send for each is in tests/integration/chat/test_context_full.py."""

from __future__ import annotations

from app.core.chat.params import FINISH_CONTEXT_FULL, FINISH_LENGTH, ReplyStats


def _stats(max_tokens: int, n_ctx: int | None = None) -> ReplyStats:
    return ReplyStats("r", finish_reason=FINISH_LENGTH, max_tokens=max_tokens, n_ctx=n_ctx)


def test_all_the_tokens_asked_for_is_the_maximum_answer_length():
    stats = _stats(512, 2048)
    stats.attribute_length(300, 512, exact=True)
    assert stats.finish_reason == FINISH_LENGTH and stats.cut_at_max_tokens
    assert stats.finish_text().render("en") == ("The answer was cut at max tokens (512); raise the maximum answer "
                                                "length to get more.")


def test_fewer_tokens_than_asked_for_is_a_full_context_with_its_numbers_and_its_own_fix():
    stats = _stats(512, 2048)
    stats.attribute_length(1982, 65, exact=True)  # the server counted them: it stopped at its context
    assert stats.finish_reason == FINISH_CONTEXT_FULL and not stats.cut_at_max_tokens
    assert stats.context_used == 2047
    assert stats.finish_text().render("en") == (
        "The answer stopped because the model's context is full (2047 of 2048 tokens). Your next message is sent "
        "without the oldest turns; for longer answers start a new chat or choose a larger context.")
    assert "上下文已满（已用 2047/2048 个 token）" in stats.finish_text().render("zh")


def test_a_context_figure_the_answer_never_came_near_is_not_said():
    stats = _stats(400, 2048)  # a client told 2048 by mistake; the server stopped at its real 256
    stats.attribute_length(40, 216, exact=False)
    assert stats.finish_reason == FINISH_CONTEXT_FULL
    assert stats.finish_text().render("en").startswith("The answer stopped because the model's context is full. ")


def test_our_own_count_of_streamed_pieces_may_fall_a_little_short_of_the_maximum():
    stats = _stats(512)
    stats.attribute_length(100, 505, exact=False)  # a few pieces carried two tokens
    assert stats.finish_reason == FINISH_LENGTH
    stats = _stats(512)
    stats.attribute_length(100, 505, exact=True)  # the server's count is exact: it stopped short
    assert stats.finish_reason == FINISH_CONTEXT_FULL


def test_other_finishes_stay_as_they_are():
    for reason in ("stop", "stopped"):
        stats = ReplyStats("r", finish_reason=reason, max_tokens=512)
        stats.attribute_length(100, 3, exact=True)
        assert stats.finish_reason == reason

