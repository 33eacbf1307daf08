"""Failures of servers this app did not start, in the chat's own classes: LM Studio's overflow, a 403, a 429."""

from __future__ import annotations

from app.core.chat import errors
from app.core.chat.classify import ContextOverflow, classify_http, classify_stream_error

LM_STUDIO_OVERFLOW = ("Trying to keep the first 10136 tokens when context the overflows. However, the model is loaded "
                      "with context length of only 7866 tokens, which is not enough. Try to load the model with a "
                      "larger context length, or provide a shorter input.")


def test_lm_studio_overflow_is_an_overflow_with_its_numbers():
    for failure in (classify_http(400, f'{{"error": "{LM_STUDIO_OVERFLOW}"}}', "r"),
                    classify_stream_error({"message": LM_STUDIO_OVERFLOW}, "r")):
        assert isinstance(failure, ContextOverflow)
        assert (failure.n_prompt_tokens, failure.n_ctx) == (10136, 7866)


def test_403_names_the_server_and_the_key():
    error = classify_http(403, "Forbidden", "r", url="http://10.0.0.2:1234", key_given=True)
    assert error.kind == errors.AUTH and error.details["status"] == 403
    assert error.message.render("en") == "The server at http://10.0.0.2:1234 refused this API key."
    assert "重新连接" in error.next_step.render("zh")


def test_429_without_retry_after_still_says_when():
    error = classify_http(429, "{}", "r")
    assert error.kind == errors.BUSY and error.details["retry_after_s"] == 5
