"""After a successful test prompt: is the safety margin still free on every device?

With a budget (``--ram-budget`` / ``--vram-budget``) the child's peak is compared with the budget: a RAM budget
may be used in full, a VRAM budget (a simulated card) keeps its margin. RAM is judged as it will be with the context
full (full_context.py: the measured peak plus what the rest of the context adds), and the sentence says which number
was measured and which is projected. What the machine has free right now (the child still loaded, less what the
full context adds) is compared with the margin of its total RAM whether or not a RAM budget was given, and of each
GPU's total memory when no VRAM budget was.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import psutil

from app.core.hardware.cgroup import read_cgroup_memory
from app.core.plan.budget import Margins
from app.core.text import T, Text, human_bytes

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RamUse:
    """An attempt's RAM: the peak measured after the test prompt of ``prompt_tokens`` tokens, and the projection
    with the context full (equal to the peak when nothing is left to fill)."""

    measured: int
    full_context: int
    prompt_tokens: int = 0

    @property
    def projected(self) -> bool:
        return self.full_context > self.measured


@dataclass(frozen=True)
class FreeNow:
    ram_free_bytes: int
    ram_total_bytes: int
    gpus: tuple[tuple[str, int, int], ...]  # (label, free, total) per NVIDIA GPU


def read_free_now() -> FreeNow:
    memory = psutil.virtual_memory()
    available, total = int(memory.available), int(memory.total)
    try:
        cgroup = read_cgroup_memory()
        headroom = cgroup.headroom_bytes() if cgroup else None
        if cgroup and headroom is not None:
            available, total = min(available, headroom), min(total, int(cgroup.limit_bytes or total))
    except Exception:  # a strange cgroup layout must not fail an attempt that loaded fine
        logger.warning("cgroup memory unreadable after a test prompt; using RAM alone", exc_info=True)
    gpus = []
    try:
        from app.core.hardware.scan import read_gpus

        for gpu in read_gpus():
            gpus.append((f"GPU {gpu.index}", int(gpu.vram_free_bytes or 0), int(gpu.vram_total_bytes or 0)))
    except Exception:  # no driver reading must not fail an attempt that loaded fine
        logger.warning("GPU free memory unreadable after a test prompt", exc_info=True)
    return FreeNow(available, total, tuple(gpus))


def _short(device: str, left: int, keep: int) -> Text:
    return T("Only {left} of {device} would stay free, less than the {keep} safety margin.",
             "{device} 只剩 {left} 可用，低于 {keep} 的安全余量。",
             device=device, left=human_bytes(max(left, 0)), keep=human_bytes(keep))


def _over_ram_budget(ram: RamUse, budget: int) -> Text:
    if not ram.projected:
        return T("The server used {peak} of RAM (measured), more than the {budget} budget.",
                 "服务器实测用了 {peak} 内存，超出了 {budget} 的预算。",
                 peak=human_bytes(ram.measured), budget=human_bytes(budget))
    return T("Measured {peak} of RAM after loading and a {tokens}-token prompt; with a full context it would need "
             "about {full}, more than the {budget} budget.",
             "加载并处理 {tokens} 个词元的提示后实测用了 {peak} 内存；"
             "上下文用满时估计约需 {full}，超出了 {budget} 的预算。",
             peak=human_bytes(ram.measured), tokens=ram.prompt_tokens, full=human_bytes(ram.full_context),
             budget=human_bytes(budget))


def _short_of_ram(free_at_full: int, keep: int, ram: RamUse) -> Text:
    if not ram.projected:
        return _short("RAM", free_at_full, keep)
    return T("With a full context only about {left} of RAM would stay free (the server would need about {full}; "
             "{peak} measured after the test prompt), less than the {keep} safety margin.",
             "上下文用满时只剩约 {left} 内存可用（服务器估计约需 {full}；测试提示后实测 {peak}），"
             "低于 {keep} 的安全余量。",
             left=human_bytes(max(free_at_full, 0)), full=human_bytes(ram.full_context),
             peak=human_bytes(ram.measured), keep=human_bytes(keep))


def margin_problem(peak_rss: int | None | RamUse, peak_vram: int | None, margins: Margins, *,
                   ram_budget: int | None, vram_budget: int | None, free_now: FreeNow | None,
                   uses_gpu: bool) -> Text | None:
    """The first device whose margin is not left free, as a sentence; None when all are fine.

    ``peak_rss``: a :class:`RamUse` (measured and full-context RAM), or a bare measured peak. ``free_now`` is what
    the machine had free after the test prompt; the growth to a full context is taken out of it here.
    """
    ram = peak_rss if isinstance(peak_rss, RamUse) else RamUse(peak_rss or 0, peak_rss or 0)
    # a RAM budget is what the server may use (no margin out of it); the margin is kept on the real machine
    if ram_budget is not None and ram.full_context > ram_budget:
        return _over_ram_budget(ram, ram_budget)
    if free_now is not None:
        keep = margins.ram_keep(free_now.ram_total_bytes)
        free_at_full = free_now.ram_free_bytes - (ram.full_context - ram.measured)
        if free_at_full < keep:
            return _short_of_ram(free_at_full, keep, ram)
    if vram_budget is not None:
        keep = margins.vram_keep(vram_budget)
        if peak_vram is not None and vram_budget - peak_vram < keep:
            return _short("VRAM", vram_budget - peak_vram, keep)
    elif uses_gpu and free_now is not None:
        for label, free, total in free_now.gpus:
            keep = margins.vram_keep(total)
            if free < keep:
                return _short(label, free, keep)
    return None
