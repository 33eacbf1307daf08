"""A fit verdict for a model before it is downloaded: the app's memory plan for this computer with the settings a
first run gets (every layer offered to the graphics card, the first-run context), from the header alone.

- FITS_GPU: every layer and the output layer on the card at that context.
- PARTIAL_GPU: N of M layers on the card, the rest on the processor.
- CPU_ONLY: nothing on the card (or no card), the model in RAM.
- DOES_NOT_FIT: not even 256 tokens of context fit.
- UNKNOWN: the header could not be read (its problem says why).

The best fit of a repository is the largest file that fits with a useful context, preferring the card.
"""

from __future__ import annotations

from dataclasses import dataclass, field, is_dataclass, replace
from enum import StrEnum
from typing import Any

from app.core.gguf.model_info import ModelInfo
from app.core.hub.errors import HubError
from app.core.launch.config import LaunchConfig
from app.core.plan.memory import MemoryPlan, make_plan
from app.core.problem import UserError
from app.core.session import first_run_ctx
from app.core.text import T, Text, human_bytes

USEFUL_CTX = 2048  # tokens: a few turns of conversation; less is not counted as a fit for the best pick


class FitVerdict(StrEnum):
    FITS_GPU = "fits_gpu"
    PARTIAL_GPU = "partial_gpu"
    CPU_ONLY = "cpu_only"
    DOES_NOT_FIT = "does_not_fit"
    UNKNOWN = "unknown"


_RANK = {FitVerdict.FITS_GPU: 3, FitVerdict.PARTIAL_GPU: 2, FitVerdict.CPU_ONLY: 1}


@dataclass(frozen=True)
class DeviceUse:
    label: str  # "GPU 0", "RAM"
    need_bytes: int
    free_bytes: int

    def to_dict(self) -> dict[str, Any]:
        return {"device": self.label, "need_bytes": self.need_bytes, "free_bytes": self.free_bytes}


@dataclass(frozen=True)
class FileFit:
    """One model file's verdict with the numbers behind it and what reading its header cost."""

    name: str
    size: int | None
    verdict: FitVerdict
    gpu_layers: int = 0  # layers on the card (the output layer counts as one)
    total_layers: int = 0  # every layer + the output layer
    ctx: int | None = None  # the context the first run gets (smaller than the first-run one when that does not fit)
    max_ctx: int | None = None  # the most context that fits with these layers
    trained_ctx: int | None = None
    devices: tuple[DeviceUse, ...] = ()
    header_bytes: int = 0  # bytes received to read the header(s)
    header_requests: int = 0
    best: bool = False
    problem: UserError | None = field(default=None, compare=False)

    @property
    def useful(self) -> bool:
        useful = min(USEFUL_CTX, self.trained_ctx or USEFUL_CTX)
        return self.verdict in _RANK and self.ctx is not None and self.ctx >= useful

    def sentence(self) -> Text:
        if self.problem is not None:
            return self.problem.message
        usage = self._usage()
        if self.verdict is FitVerdict.FITS_GPU:
            return T("Fits on the graphics card: all {m} layers, {ctx} tokens of context (needed / free: {usage}).",
                     "显卡放得下：全部 {m} 层，上下文 {ctx} 个词元（所需 / 可用：{usage}）。",
                     m=self.total_layers, ctx=self.ctx, usage=usage)
        if self.verdict is FitVerdict.PARTIAL_GPU:
            return T("Fits with {n} of {m} layers on the graphics card, the rest on the processor; {ctx} tokens of "
                     "context (needed / free: {usage}).",
                     "显卡放得下 {m} 层中的 {n} 层，其余在处理器上运行；上下文 {ctx} 个词元（所需 / 可用：{usage}）。",
                     n=self.gpu_layers, m=self.total_layers, ctx=self.ctx, usage=usage)
        if self.verdict is FitVerdict.CPU_ONLY:
            return T("Runs on the processor only, with {ctx} tokens of context (needed / free: {usage}).",
                     "只能在处理器上运行，上下文 {ctx} 个词元（所需 / 可用：{usage}）。", ctx=self.ctx, usage=usage)
        return T("Does not fit in this computer's memory, not even with 256 tokens of context "
                 "(needed / free: {usage}).",
                 "这台电脑的内存放不下，即使上下文只有 256 个词元也不行（所需 / 可用：{usage}）。", usage=usage)

    def _usage(self) -> str:
        """"GPU 0 3.1 GiB of 7.5 GiB, RAM 420 MiB of 12 GiB": what the plan needs on each device of what is free."""
        return ", ".join(f"{d.label} {human_bytes(d.need_bytes)} / {human_bytes(d.free_bytes)}" for d in self.devices)

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        return {"name": self.name, "size": self.size, "verdict": self.verdict.value, "gpu_layers": self.gpu_layers,
                "total_layers": self.total_layers, "ctx": self.ctx, "max_ctx": self.max_ctx,
                "trained_ctx": self.trained_ctx, "devices": [d.to_dict() for d in self.devices],
                "header_bytes": self.header_bytes, "header_requests": self.header_requests, "best": self.best,
                "sentence": self.sentence().render(lang),
                "problem": None if self.problem is None else {
                    "kind": getattr(self.problem, "kind", None), "message": self.problem.message.render(lang),
                    "fix": self.problem.next_step.render(lang) if self.problem.next_step else None}}


def first_run_config(info: ModelInfo, backend: str) -> LaunchConfig:
    """The settings a first run of this model gets: every layer offered to the card, the first-run context."""
    return LaunchConfig(model=info.path, backend=backend, ctx=first_run_ctx(info), gpu_layers=-1)


def _placement(plan: MemoryPlan) -> tuple[int, int | None]:
    """(layers on the card, context) the plan leaves for the first run."""
    if plan.has_gpu and plan.max_gpu_layers is not None:
        return plan.max_gpu_layers, plan.ctx
    return 0, plan.recommended_ctx


def judge(info: ModelInfo, hw: Any, backend: str, *, name: str, size: int | None,
          vram_budget: int | None = None, ram_budget: int | None = None) -> FileFit:
    """The verdict for ``info`` on ``hw`` (a HardwareReport; the budgets plan for that much free memory instead, as
    ``plan`` does); UserError when the header cannot be planned.

    A card too small for even the engine's own buffers (a GPU backend allocates some there at 0 layers) leaves the
    processor: then the plan without the card says whether the model runs there."""
    config = first_run_config(info, backend)
    plan = make_plan(info, config, hw, vram_budget=vram_budget, ram_budget=ram_budget)
    layers, ctx = _placement(plan)
    if ctx is None and plan.has_gpu:
        hw, vram_budget = _without_gpus(hw), None
        plan = make_plan(info, config, hw, ram_budget=ram_budget)
        layers, ctx = _placement(plan)
    total = plan.n_layer + 1
    if ctx is None:
        verdict = FitVerdict.DOES_NOT_FIT
        chosen = plan
    else:
        chosen = make_plan(info, config.with_changes(gpu_layers=layers, ctx=ctx), hw, vram_budget=vram_budget,
                           ram_budget=ram_budget)
        verdict = (FitVerdict.FITS_GPU if layers >= total else
                   FitVerdict.PARTIAL_GPU if layers > 0 else FitVerdict.CPU_ONLY)
    devices = tuple(DeviceUse(d.budget.label, d.total_bytes, d.budget.free_bytes) for d in chosen.devices)
    return FileFit(name, size, verdict, gpu_layers=min(layers, total), total_layers=total, ctx=ctx,
                   max_ctx=chosen.max_ctx if ctx is not None else None, trained_ctx=info.context_length,
                   devices=devices)


def _without_gpus(hw: Any) -> Any:
    """The same machine as the plan sees it with no graphics card."""
    return replace(hw, gpus=[]) if is_dataclass(hw) and not isinstance(hw, type) else hw


def unknown(name: str, size: int | None, problem: UserError) -> FileFit:
    return FileFit(name, size, FitVerdict.UNKNOWN, problem=problem)


def mark_best(fits: list[FileFit]) -> list[FileFit]:
    """The same verdicts with the best fit marked: the largest file that fits with a useful context, on the card
    before partly on the card before the processor."""
    candidates = [f for f in fits if f.useful]
    if not candidates:
        return list(fits)
    best = max(candidates, key=lambda f: (_RANK[f.verdict], f.size or 0))
    return [replace(f, best=f is best) for f in fits]


__all__ = ["FileFit", "FitVerdict", "HubError", "judge", "mark_best", "unknown"]
