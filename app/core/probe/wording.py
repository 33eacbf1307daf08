"""An attempt in words, the same for the CLI's attempt lines and the result's summary.

Every RAM figure says what it is: the peak measured after the test prompt, or the projection with the context full
(full_context.py), so a line never shows two numbers for one thing without saying which is which.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.text import T, Text, human_bytes

if TYPE_CHECKING:
    from app.core.probe.attempt import Attempt


def full_context_note(attempt: Attempt) -> Text | None:
    """"about 410.0 MiB with a full context", where the projection adds to the measured peak (None otherwise)."""
    full = attempt.full_context_rss_bytes
    if not attempt.peak_rss_bytes or full is None or full <= attempt.peak_rss_bytes:
        return None
    return T("about {full} with a full context", "上下文用满时约 {full}", full=human_bytes(full))


def ram_text(attempt: Attempt) -> Text:
    """"peak RAM 203.0 MiB measured, about 410.0 MiB with a full context", or the measured peak alone."""
    if not attempt.peak_rss_bytes:
        return T("RAM not measured", "未测到内存用量")
    peak = human_bytes(attempt.peak_rss_bytes)
    note = full_context_note(attempt)
    if note is None:
        return T("peak RAM {peak} measured", "实测内存峰值 {peak}", peak=peak)
    return T("peak RAM {peak} measured, {note}", "实测内存峰值 {peak}，{note_zh}", peak=peak,
             note=note.render("en"), note_zh=note.render("zh"))


def _speeds(attempt: Attempt) -> Text:
    if not attempt.generation_tps:
        return T("", "")
    if attempt.prompt_tps:
        return T(", {gen} tokens/s generating, {pp} tokens/s reading the prompt",
                 "，生成每秒 {gen} 个词元，读提示每秒 {pp} 个词元",
                 gen=f"{attempt.generation_tps:.1f}", pp=f"{attempt.prompt_tps:.0f}")
    return T(", {gen} tokens/s generating", "，生成每秒 {gen} 个词元", gen=f"{attempt.generation_tps:.1f}")


def _vram(attempt: Attempt) -> Text:
    if not attempt.peak_vram_bytes:
        return T("", "")
    return T(", peak VRAM {vram}", "，显存峰值 {vram}", vram=human_bytes(attempt.peak_vram_bytes))


def attempt_line(attempt: Attempt) -> Text:
    """One finished attempt: the verdict, then what was measured (a margin failure's reason already says it)."""
    parts = {"s": f"{attempt.seconds:.1f}"}
    for name, text in (("ram", ram_text(attempt)), ("vram", _vram(attempt)), ("speeds", _speeds(attempt))):
        parts[name], parts[f"{name}_zh"] = text.render("en"), text.render("zh")
    if attempt.ok:
        return T("passed; {ram}{vram}; {s} s{speeds}", "通过；{ram_zh}{vram_zh}；{s} 秒{speeds_zh}", **parts)
    reason = attempt.reason or T("the server failed ({cause})", "服务器失败（{cause}）", cause=attempt.cause or "?")
    parts["reason"], parts["reason_zh"] = reason.render("en"), reason.render("zh")
    if attempt.cause == "margin":
        return T("failed: {reason} ({s} s)", "失败：{reason_zh}（{s} 秒）", **parts)
    return T("failed: {reason} ({ram}{vram}; {s} s)", "失败：{reason_zh}（{ram_zh}{vram_zh}；{s} 秒）", **parts)
