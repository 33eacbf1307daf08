"""Count the tokens a conversation costs, the way the server counts them.

Message contents are tokenized by the server (cached per content). The chat template adds tokens around
each message and once per prompt; those two numbers are calibrated once from ``usage.prompt_tokens`` of
two tiny non-streamed requests, and scaled up whenever the server reports more than we counted.
When the server cannot tokenize, counts are a labelled estimate (UTF-8 bytes / 3, rounded up).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from app.core.text import T, Text

Tokenize = Callable[[str], "list[int] | None"]
Complete = Callable[[list[dict[str, str]]], int]  # messages -> usage.prompt_tokens

DEFAULT_FIXED = 16
DEFAULT_PER_MESSAGE = 8
_PROBE_SHORT = [{"role": "user", "content": "Hi"}]
_PROBE_LONG = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
               {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "Bye"}]
ESTIMATE_NOTICE = T("Token counts are estimates: this server cannot count tokens.",
                    "token 数为估算值：该服务器无法统计 token。")


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / 3) + 1


class TokenCounter:
    def __init__(self, tokenize: Tokenize | None):
        self._tokenize = tokenize
        self._cache: dict[str, int] = {}
        self.fixed = DEFAULT_FIXED
        self.per_message = DEFAULT_PER_MESSAGE
        self.scale = 1.0  # grows when the server counted more than we did
        self.calibrated = False
        self.is_estimate = tokenize is None

    @property
    def notice(self) -> Text | None:
        return ESTIMATE_NOTICE if self.is_estimate else None

    def count_text(self, text: str) -> int:
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        tokens = None if self.is_estimate or self._tokenize is None else self._tokenize(text)
        if tokens is None:
            self.is_estimate = True
            count = estimate_tokens(text)
        else:
            count = len(tokens)
        if len(self._cache) > 4096:
            self._cache.clear()
        self._cache[text] = count
        return count

    @property
    def overhead(self) -> int:
        """Tokens the template adds once per prompt."""
        return math.ceil(self.fixed * self.scale)

    def count_message(self, message: dict[str, str]) -> int:
        return math.ceil((self.count_text(message.get("content") or "") + self.per_message) * self.scale)

    def count_messages(self, messages: list[dict[str, str]]) -> int:
        return self.overhead + sum(self.count_message(m) for m in messages)

    def calibrate(self, prompt_tokens_of: Complete) -> None:
        """Measure the template overhead once from two tiny requests' ``usage.prompt_tokens``."""
        if self.calibrated or self.is_estimate:
            return
        short_extra = prompt_tokens_of(_PROBE_SHORT) - self._content_sum(_PROBE_SHORT)
        long_extra = prompt_tokens_of(_PROBE_LONG) - self._content_sum(_PROBE_LONG)
        per_message = (long_extra - short_extra) / (len(_PROBE_LONG) - len(_PROBE_SHORT))
        self.per_message = max(0, math.ceil(per_message))
        self.fixed = max(0, short_extra - self.per_message * len(_PROBE_SHORT))
        self.calibrated = True

    def observe(self, messages: list[dict[str, str]], prompt_tokens: int) -> int:
        """The server counted ``prompt_tokens`` for ``messages``; if we under-counted, scale all our counts up
        by the ratio (an under-count is usually proportional: a wrong estimate or a template we cannot see).

        Returns how many tokens we were short (0 when our count was enough)."""
        counted = self.count_messages(messages)
        shortfall = prompt_tokens - counted
        if shortfall > 0 and counted > 0:
            self.scale *= (prompt_tokens + 1) / counted
        return max(0, shortfall)

    def _content_sum(self, messages: list[dict[str, str]]) -> int:
        return sum(self.count_text(m["content"]) for m in messages)
