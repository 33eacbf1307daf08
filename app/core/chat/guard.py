"""Context guard: choose which messages are sent so the prompt always fits the server's context.

Budget = per-slot context − max_tokens − margin (15 % of the context by default). The system prompt and the
newest turns are kept; the oldest whole turns (a user message with the answers after it) are dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from app.core.chat import errors
from app.core.chat.tokens import TokenCounter
from app.core.text import T, Text

DEFAULT_MARGIN = 0.15


@dataclass
class FitResult:
    messages: list[dict[str, str]]
    prompt_tokens: int  # our count of what is sent
    naive_prompt_tokens: int  # our count of the whole history
    budget: int | None
    dropped_messages: int = 0
    dropped_turns: int = 0
    notices: list[Text] = field(default_factory=list)


def budget_for(ctx_per_slot: int, max_tokens: int, margin: float = DEFAULT_MARGIN) -> int:
    return ctx_per_slot - max_tokens - math.ceil(ctx_per_slot * margin)


def dropped_notice(count: int) -> Text:
    if count == 1:
        return T("1 earlier message is no longer sent to the model (the context is full).",
                 "有 1 条较早的消息不再发送给模型（上下文已满）。")
    return T("{count} earlier messages are no longer sent to the model (the context is full).",
             "有 {count} 条较早的消息不再发送给模型（上下文已满）。", count=count)


def split_turns(history: list[dict[str, str]]) -> tuple[list[dict[str, str]], list[list[dict[str, str]]]]:
    """(leading system messages, turns); each turn starts at a user message."""
    system: list[dict[str, str]] = []
    turns: list[list[dict[str, str]]] = []
    for message in history:
        if message["role"] == "system" and not turns:
            system.append(message)
        elif message["role"] == "user" or not turns:
            turns.append([message])
        else:
            turns[-1].append(message)
    return system, turns


def fit_history(history: list[dict[str, str]], counter: TokenCounter, ctx_per_slot: int | None,
                max_tokens: int, margin: float = DEFAULT_MARGIN, *, history_share: float = 1.0) -> FitResult:
    """The newest part of ``history`` (ending with the message being sent) that fits; raises ChatError
    ``context_too_long`` when even the newest message alone does not fit.

    ``history_share`` below 1 (the memory watchdog's warning) keeps older turns only within that share of the
    budget: fewer tokens sent, fewer KV cells the server touches. The newest turn is always sent when it fits the
    full budget."""
    naive = counter.count_messages(history)
    if not ctx_per_slot:  # unknown until the server tells us (first overflow)
        return FitResult(list(history), naive, naive, None)
    budget = budget_for(ctx_per_slot, max_tokens, margin)
    if budget <= 0:
        raise errors.no_room_for_answer(ctx_per_slot, max_tokens)
    system, turns = split_turns(history)
    used = counter.overhead + sum(counter.count_message(m) for m in system)
    kept: list[list[dict[str, str]]] = []
    older_budget = int(budget * min(max(history_share, 0.0), 1.0))
    for turn in reversed(turns):
        cost = sum(counter.count_message(m) for m in turn)
        if used + cost > (budget if not kept else older_budget):
            break
        kept.append(turn)
        used += cost
    if not kept:
        newest = turns[-1][-1] if turns else history[-1]
        raise errors.message_too_long(counter.count_message(newest) + counter.overhead, budget, ctx_per_slot,
                                      max_tokens)
    kept.reverse()
    sent = system + [m for turn in kept for m in turn]
    dropped_turns = len(turns) - len(kept)
    dropped = sum(len(t) for t in turns[:dropped_turns])
    notices = [dropped_notice(dropped)] if dropped else []
    return FitResult(sent, used, naive, budget, dropped, dropped_turns, notices)
