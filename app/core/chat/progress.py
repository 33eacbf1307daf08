"""How far the server has read a long prompt, between send and the first token of the answer.

llama-server reports it when a streamed request carries ``"return_progress": true``: chunks before the first token
then hold ``"prompt_progress": {"total", "cache", "processed", "time_ms"}`` (``processed`` counts the tokens
reused from its cache too; verified against b11434: a 1,424-token prompt at batch size 256 gave processed
0, 256, 512, …, 1280, 1424). llama-cpp-python's server reports nothing while it reads: there the value carries only
the prompt's size as the client counted it, and the sentence says no percentage.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from app.core.text import T, Text

RETURN_PROGRESS = "return_progress"  # the request field llama-server reads (both /completion and the chat route)
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PromptProgress:
    """``processed`` is None where the server does not report progress: then only ``total`` (our count) is known."""

    total: int | None  # tokens of the whole prompt; None: not counted
    processed: int | None = None  # tokens read so far, cache included (the server's own figure)
    cache: int = 0  # tokens the server reused from its cache
    time_ms: int | None = None  # the server's time spent reading so far
    estimate: bool = False  # ``total`` is the client's estimate, not a count from the server's tokenizer

    def _report(self) -> tuple[int, int] | None:
        """(tokens read, tokens in all) when the server itself says how far it is; else None."""
        if self.processed is None or not self.total:
            return None
        return self.processed, self.total

    @property
    def reported(self) -> bool:
        """The server itself says how far it is (a percentage is true)."""
        return self._report() is not None

    @property
    def complete(self) -> bool:
        """The server says it has read every token (what follows is the model working on its answer)."""
        report = self._report()
        return report is not None and report[0] >= report[1]

    @property
    def percent(self) -> int | None:
        """Whole percent read, rounded down (100 only once every token is read); None without a server report."""
        report = self._report()
        if report is None:
            return None
        processed, total = report
        return min(100, processed * 100 // total)

    def sentence(self, elapsed_s: float = 0.0) -> Text:
        """"Reading your message: 1,024 of 3,100 tokens (33 %) · 12 s", or without a report "Reading your message
        (about 3,100 tokens)… 7 s" — never a percentage the server did not give. ``elapsed_s``: since send."""
        if self.reported:
            en, zh = ("Reading your message: {processed:,} of {total:,} tokens ({percent} %)",
                      "正在读取你的消息：已读 {processed:,} / {total:,} 个词元（{percent} %）")
        elif self.total:
            en, zh = "Reading your message (about {total:,} tokens)…", "正在读取你的消息（约 {total:,} 个词元）…"
        else:
            en, zh = "Reading your message…", "正在读取你的消息…"
        seconds = int(elapsed_s)
        if seconds >= 1:  # the time keeps counting, so a slow step between two reports does not look frozen
            gap = " · " if self.reported else " "
            en, zh = f"{en}{gap}{{seconds}} s", f"{zh}{gap}{{seconds}} 秒"
        return T(en, zh, processed=self.processed, total=self.total, percent=self.percent, seconds=seconds)


def counted(total: int | None, *, estimate: bool) -> PromptProgress:
    """What is known before (or without) a server report: the prompt's size as the client counted it."""
    return PromptProgress(total=total if total and total > 0 else None, estimate=estimate)


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return None
    return int(value)


def prompt_progress(payload: dict[str, Any]) -> PromptProgress | None:
    """The ``prompt_progress`` object of one streamed chunk as a value; None when the chunk has none or it is
    not the shape llama-server sends (logged: a malformed report never breaks the answer)."""
    raw = payload.get("prompt_progress")
    if raw is None:
        return None
    fields = {name: _count(raw.get(name)) if isinstance(raw, dict) else None
              for name in ("total", "processed", "cache", "time_ms")}
    total, processed = fields["total"], fields["processed"]
    if not total or processed is None or processed > total:
        logger.info("ignoring a prompt_progress the server sent in an unknown shape: %.200r", raw)
        return None
    return PromptProgress(total, processed, fields["cache"] or 0, fields["time_ms"])
