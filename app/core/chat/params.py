"""What a reply is asked with (ChatParams) and what is measured about it (ReplyStats)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from app.core.text import T, Text

DEFAULT_MAX_TOKENS = 512


@dataclass(frozen=True)
class ChatParams:
    """Sampling settings. ``max_tokens=None`` means "512, or a quarter of the per-slot context if smaller"."""

    temperature: float = 0.7
    top_p: float = 0.95
    max_tokens: int | None = None
    repeat_penalty: float = 1.1
    system_prompt: str = ""
    seed: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # more request fields, e.g. {"logit_bias": {...}}

    def with_changes(self, **changes: Any) -> ChatParams:
        return replace(self, **changes)

    def effective_max_tokens(self, ctx_per_slot: int | None) -> int:
        if self.max_tokens is not None:
            return self.max_tokens
        if ctx_per_slot:
            return max(16, min(DEFAULT_MAX_TOKENS, ctx_per_slot // 4))
        return DEFAULT_MAX_TOKENS

    def request_fields(self, max_tokens: int) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": max_tokens,
            "repeat_penalty": self.repeat_penalty,
        }
        if self.seed is not None:
            fields["seed"] = self.seed
        fields.update(self.extra)
        return fields

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> ChatParams:
        data = data or {}
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


FINISH_STOP = "stop"
FINISH_LENGTH = "length"
FINISH_STOPPED = "stopped"  # the user pressed stop
# "length" with fewer tokens than asked for: the server's context ran out, not the answer's maximum length
FINISH_CONTEXT_FULL = "context_full"
CONTEXT_SAID_SHARE = 0.9  # "used of ctx" is said only when the answer really reached near that context

HELD_BACK_SPAN_S, HELD_BACK_WAIT_S = 0.1, 1.0  # every piece within 0.1 s, after a wait of over 1 s: sent at once
# ... and closer together than any model generates (4,000 tokens/s): read from one buffer, not generated. A tiny
# model on a loaded machine can wait over a second for its first token and then stream 12 tokens in 30 ms (2.5 ms
# apart): that is a rate, not a held-back reply.
HELD_BACK_GAP_S = 0.00025


def generation_rate(tokens: int, started_at: float, first_token_at: float | None, end_at: float) -> float | None:
    """Tokens per second over generation time only: the tokens after the first, over the time from the first
    token to the end of the reply. The wait before the first token (a model still loading, a long prompt being
    read) is not in it; that wait is the stats' ``ttft_s``. None when fewer than two tokens came, or when a long
    wait ended with every piece at once (a server that held the text back, then sent it): no rate can be read."""
    if first_token_at is None or tokens < 2 or end_at <= first_token_at:
        return None
    span = end_at - first_token_at
    held_back = span < HELD_BACK_SPAN_S and first_token_at - started_at > HELD_BACK_WAIT_S
    if held_back and span / (tokens - 1) < HELD_BACK_GAP_S:
        return None
    return (tokens - 1) / span


@dataclass
class ReplyStats:
    """Measured for one reply. ``tokens_source`` is "server" when usage/timings came back, else "counted"."""

    request_id: str
    ttft_s: float | None = None
    total_s: float = 0.0
    tokens_per_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int = 0
    tokens_source: str = "counted"
    finish_reason: str | None = None
    max_tokens: int | None = None
    messages_sent: int = 0
    trimmed_messages: int = 0
    retried_after_overflow: bool = False
    n_ctx: int | None = None  # the per-slot context the server ran this reply in, as it said (None: unknown)
    context_used: int | None = None  # prompt + answer tokens when the reply ended (the server's or our count)

    @property
    def cut_at_max_tokens(self) -> bool:
        return self.finish_reason == FINISH_LENGTH

    def attribute_length(self, prompt_tokens: int | None, completion_tokens: int, *, exact: bool) -> None:
        """Tell a "length" finish apart: the answer's maximum (``max_tokens`` generated) or a full context.

        Both servers end an answer with "length" for either limit (llama-server: n_predict reached, or prompt +
        answer reached n_ctx; llama-cpp-python shortens max_tokens to what the context has left), and these are
        the only limits the app leaves them. So fewer tokens than asked means the context ran out. ``exact``: the
        count is the server's own; our count of streamed pieces may be a little short (several tokens in one
        piece), so a few tokens below the maximum still count as the maximum."""
        if self.finish_reason != FINISH_LENGTH or not self.max_tokens:
            return
        self.context_used = (prompt_tokens or 0) + completion_tokens if prompt_tokens is not None else None
        tolerance = 0 if exact else max(2, self.max_tokens // 50)
        if self.max_tokens - completion_tokens > tolerance:
            self.finish_reason = FINISH_CONTEXT_FULL

    def finish_text(self) -> Text:
        if self.finish_reason == FINISH_LENGTH:
            return T("The answer was cut at max tokens ({max_tokens}); raise the maximum answer length to get more.",
                     "回答在达到最大长度（{max_tokens} 个 token）时被截断；调高回答最大长度可得到更完整的回答。",
                     max_tokens=self.max_tokens if self.max_tokens is not None else "?")
        if self.finish_reason == FINISH_CONTEXT_FULL:
            return self._context_full_text()
        if self.finish_reason == FINISH_STOPPED:
            return T("You stopped the answer.", "您停止了回答。")
        if self.finish_reason == FINISH_STOP:
            return T("The answer is complete.", "回答已完成。")
        return T("The answer ended ({reason}).", "回答已结束（{reason}）。", reason=self.finish_reason or "?")

    def _context_full_text(self) -> Text:
        fix = T("Your next message is sent without the oldest turns; for longer answers start a new chat or choose a "
                "larger context.",
                "下一条消息发送时会去掉最早的几轮对话；如需更长的回答，请开始新对话或选用更大的上下文。")
        used, ctx = self.context_used, self.n_ctx
        if used and ctx and used >= ctx * CONTEXT_SAID_SHARE:
            return T("The answer stopped because the model's context is full ({used} of {ctx} tokens). {fix}",
                     "回答已停止：模型的上下文已满（已用 {used}/{ctx} 个 token）。{fix_zh}",
                     used=used, ctx=ctx, fix=fix.en, fix_zh=fix.zh)
        return T("The answer stopped because the model's context is full. {fix}",
                 "回答已停止：模型的上下文已满。{fix_zh}", fix=fix.en, fix_zh=fix.zh)

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        data = asdict(self)
        data["cut_at_max_tokens"] = self.cut_at_max_tokens
        data["finish_text"] = self.finish_text().render(lang)
        return data
