"""What a probe hands back: the recommendation, every attempt with its measurements, the plan, cache state."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.plan.memory import MemoryPlan
from app.core.probe.attempt import Attempt
from app.core.text import T, Text, human_bytes


@dataclass(frozen=True)
class ProbeProgress:
    attempt: int  # 1-based number of the attempt being started
    max_attempts: int  # upper bound on the number of attempts (may grow if re-checks fail)
    phase: str  # "layers" | "ctx" | "cached" | "done"
    gpu_layers: int
    ctx: int
    message: Text
    last: Attempt | None = None  # the attempt that just finished, if any


@dataclass
class ProbeResult:
    recommendation: dict[str, int] | None  # {"gpu_layers", "ctx"}; None when nothing passed
    attempts: list[Attempt]
    plan: MemoryPlan | None
    cached: bool = False
    wall_seconds: float = 0.0
    backend: dict[str, Any] = field(default_factory=dict)
    notes: list[Text] = field(default_factory=list)
    plan_dict: dict[str, Any] | None = None  # the stored plan of a cached result

    @property
    def passing_attempt(self) -> Attempt | None:
        if not self.recommendation:
            return None
        matches = [a for a in self.attempts if a.ok and a.gpu_layers == self.recommendation["gpu_layers"]
                   and a.ctx == self.recommendation["ctx"]]
        return matches[-1] if matches else None

    def summary(self) -> Text:
        if not self.recommendation:
            return T("No setting passed: the model does not run in the memory available, not even with "
                     "256 tokens of context on the CPU.",
                     "没有任何设置通过：即使只在 CPU 上使用 256 个词元的上下文，这个模型也无法在可用内存中运行。")
        passing = self.passing_attempt
        return T("Safe settings, measured: {layers} GPU layers and {ctx} tokens of context "
                 "(peak RAM {rss}, peak VRAM {vram}; {n} test loads{cached}).",
                 "实测的安全设置：{layers} 层放到 GPU，上下文 {ctx} 个词元（内存峰值 {rss}，显存峰值 {vram}；"
                 "共 {n} 次测试加载{cached_zh}）。",
                 layers=self.recommendation["gpu_layers"], ctx=self.recommendation["ctx"],
                 rss=human_bytes(passing.peak_rss_bytes) if passing else "?",
                 vram=human_bytes(passing.peak_vram_bytes) if passing and passing.peak_vram_bytes else "-",
                 n=len(self.attempts), cached=", from the cache" if self.cached else "",
                 cached_zh="，来自缓存" if self.cached else "")

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        plan = self.plan.to_dict(lang) if self.plan is not None else self.plan_dict
        return {
            "recommendation": dict(self.recommendation) if self.recommendation else None,
            "attempts": [a.to_dict(lang) for a in self.attempts],
            "plan": plan,
            "cached": self.cached,
            "wall_seconds": round(self.wall_seconds, 3),
            "backend": self.backend,
            "summary": self.summary().render(lang),
            "notes": [n.render(lang) for n in self.notes],
        }

    def to_cache(self) -> dict[str, Any]:
        """Language-neutral form for the cache: sentences keep both languages."""
        attempts = []
        for a in self.attempts:
            entry = a.to_dict("en")
            entry["reason"] = a.reason.to_dict() if a.reason is not None else None
            attempts.append(entry)
        return {"recommendation": self.recommendation, "attempts": attempts, "backend": self.backend,
                "plan": self.plan.to_dict("en") if self.plan else self.plan_dict,
                "wall_seconds": self.wall_seconds}


def attempt_from_cache(entry: dict[str, Any]) -> Attempt:
    reason = entry.get("reason")
    return Attempt(
        gpu_layers=int(entry["gpu_layers"]), ctx=int(entry["ctx"]), ok=bool(entry["ok"]),
        peak_rss_bytes=entry.get("peak_rss_bytes"), peak_vram_bytes=entry.get("peak_vram_bytes"),
        seconds=float(entry.get("seconds") or 0.0), load_seconds=entry.get("load_seconds"),
        cause=entry.get("cause"), reason=Text(reason["en"], reason["zh"]) if reason else None,
        prompt_tokens=entry.get("prompt_tokens"),
    )


def result_from_cache(stored: dict[str, Any], plan: MemoryPlan | None) -> ProbeResult:
    return ProbeResult(
        recommendation=stored.get("recommendation"),
        attempts=[attempt_from_cache(e) for e in stored.get("attempts", [])],
        plan=plan, cached=True, backend=stored.get("backend") or {},
        plan_dict=None if plan is not None else stored.get("plan"),
    )
