"""What a probe hands back: the recommendation, every attempt with its measurements, the plan, cache state.

A result is one object, :class:`ProbeResult`, everywhere: the cache and a model's profile keep its dict form
(``to_cache()`` / ``to_dict()``) and :meth:`ProbeResult.from_dict` reads either back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.core.plan.memory import MemoryPlan
from app.core.plan.placement import Placement
from app.core.probe.attempt import Attempt
from app.core.probe.wording import ram_text
from app.core.text import T, Text, human_bytes


@dataclass(frozen=True)
class ProbeProgress:
    attempt: int  # 1-based number of the attempt being started
    max_attempts: int  # upper bound on the number of attempts (may grow if re-checks fail)
    phase: str  # "layers" | "ctx" | "experts" | "speed" | "spill" | "cached" | "done"
    gpu_layers: int
    ctx: int
    message: Text
    last: Attempt | None = None  # the attempt that just finished, if any


@dataclass(frozen=True)
class Recommendation:
    """The settings the probe proved: the most GPU layers, then the most context, that really loaded and answered;
    for a model with experts, the fastest placement that passed (``n_cpu_moe``: leading layers whose experts stay in
    RAM)."""

    gpu_layers: int
    ctx: int
    n_cpu_moe: int = 0

    def changes(self) -> dict[str, int]:
        """As LaunchConfig changes (what the Settings step applies)."""
        return {"gpu_layers": self.gpu_layers, "ctx": self.ctx, "n_cpu_moe": self.n_cpu_moe}

    def to_dict(self) -> dict[str, int]:
        return self.changes()

    def placement(self, n_layer: int) -> Text:
        """Where the model goes, in plain words."""
        return Placement(n_layer, self.gpu_layers, self.n_cpu_moe).describe()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Recommendation | None:
        """None for a missing or unreadable one (a hand-edited profile must not crash the window)."""
        try:
            if not data:
                return None
            n_cpu_moe = int(data.get("n_cpu_moe") or 0)  # results stored before experts were placed have none
            return cls(int(data["gpu_layers"]), int(data["ctx"]), max(n_cpu_moe, 0))
        except (KeyError, TypeError, ValueError, AttributeError):
            return None


@dataclass
class ProbeResult:
    recommendation: Recommendation | None  # None when nothing passed
    attempts: list[Attempt]
    plan: MemoryPlan | None
    cached: bool = False
    wall_seconds: float = 0.0
    backend: dict[str, Any] = field(default_factory=dict)
    notes: list[Text] = field(default_factory=list)
    plan_dict: dict[str, Any] | None = None  # the stored plan of a cached result
    saved_at: float | None = None  # when the probe cache stored it (time.time()); None until then

    @property
    def passing_attempt(self) -> Attempt | None:
        rec = self.recommendation
        if rec is None:
            return None
        matches = [a for a in self.attempts if a.ok and (a.gpu_layers, a.ctx, a.n_cpu_moe) ==
                   (rec.gpu_layers, rec.ctx, rec.n_cpu_moe)]
        return matches[-1] if matches else None

    def summary(self) -> Text:
        if not self.recommendation:
            return T("No setting passed: the model does not run in the memory available, not even with "
                     "256 tokens of context on the CPU.",
                     "没有任何设置通过：即使只在 CPU 上使用 256 个词元的上下文，这个模型也无法在可用内存中运行。")
        passing = self.passing_attempt
        ram = ram_text(passing) if passing else T("peak RAM ?", "内存峰值 ?")
        rss = {"rss": ram.render("en"), "rss_zh": ram.render("zh")}
        if passing is not None and passing.peak_vram_bytes:
            memory = T("{rss}, peak graphics memory {vram}", "{rss_zh}，显存峰值 {vram}",
                       vram=human_bytes(passing.peak_vram_bytes), **rss)
        elif self.recommendation.gpu_layers == 0:  # no GPU, or none of the model on it: say so, not "VRAM -"
            memory = T("{rss}, no graphics memory used", "{rss_zh}，未使用显存", **rss)
        else:  # on the GPU but not measured (no NVML): leave it out
            memory = T("{rss}", "{rss_zh}", **rss)
        memory = _with_speed(memory, passing)
        counts = {"n": len(self.attempts), "cached": ", from the cache" if self.cached else "",
                  "cached_zh": "，来自缓存" if self.cached else "", "ctx": self.recommendation.ctx,
                  "memory": memory.render("en"), "memory_zh": memory.render("zh")}
        if self.recommendation.n_cpu_moe > 0 and self.n_layer:
            where = self.recommendation.placement(self.n_layer)
            return T("Safe settings, measured: {where} and {ctx} tokens of context ({memory}; {n} test loads{cached}).",
                     "实测的安全设置：{where_zh}，上下文 {ctx} 个词元（{memory_zh}；共 {n} 次测试加载{cached_zh}）。",
                     where=where.render("en"), where_zh=where.render("zh"), **counts)
        return T("Safe settings, measured: {layers} GPU layers and {ctx} tokens of context "
                 "({memory}; {n} test loads{cached}).",
                 "实测的安全设置：{layers} 层放到 GPU，上下文 {ctx} 个词元（{memory_zh}；"
                 "共 {n} 次测试加载{cached_zh}）。",
                 layers=self.recommendation.gpu_layers, **counts)

    @property
    def n_layer(self) -> int:
        """The model's layer count, from the plan (or the stored plan of a cached result); 0 when unknown."""
        if self.plan is not None:
            return int(self.plan.n_layer)
        value = (self.plan_dict or {}).get("n_layer")
        return int(value) if isinstance(value, int) else 0

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        plan = self.plan.to_dict(lang) if self.plan is not None else self.plan_dict
        return {
            "recommendation": self.recommendation.to_dict() if self.recommendation else None,
            "attempts": [a.to_dict(lang) for a in self.attempts],
            "plan": plan,
            "cached": self.cached,
            "wall_seconds": round(self.wall_seconds, 3),
            "backend": self.backend,
            "summary": self.summary().render(lang),
            "notes": [n.render(lang) for n in self.notes],
            "saved_at": self.saved_at,
        }

    def to_cache(self) -> dict[str, Any]:
        """Language-neutral form for the cache: sentences keep both languages."""
        attempts = []
        for a in self.attempts:
            entry = a.to_dict("en")
            entry["reason"] = a.reason.to_dict() if a.reason is not None else None
            attempts.append(entry)
        return {"recommendation": self.recommendation.to_dict() if self.recommendation else None,
                "attempts": attempts, "backend": self.backend,
                "plan": self.plan.to_dict("en") if self.plan else self.plan_dict,
                "wall_seconds": self.wall_seconds, "notes": [n.to_dict() for n in self.notes],
                "saved_at": self.saved_at}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], plan: MemoryPlan | None = None) -> ProbeResult:
        """A result from its ``to_cache()`` or ``to_dict()`` form (the cache, a model's profile).

        Sentences stored in one language only (``to_dict``) come back as that text in both. Profiles written
        before ``saved_at`` was a field carry it as the same key, so they read the same way.
        """
        saved_at = data.get("saved_at")
        return cls(
            recommendation=Recommendation.from_dict(data.get("recommendation")),
            attempts=[attempt_from_cache(e) for e in data.get("attempts") or () if isinstance(e, Mapping)],
            plan=plan, cached=bool(data.get("cached", False)),
            wall_seconds=float(data.get("wall_seconds") or 0.0), backend=dict(data.get("backend") or {}),
            notes=[_text_of(n) for n in data.get("notes") or ()],
            plan_dict=None if plan is not None else data.get("plan"),
            saved_at=float(saved_at) if isinstance(saved_at, (int, float)) else None,
        )


def _with_speed(memory: Text, passing: Attempt | None) -> Text:
    """The memory part of the summary, with the generation speed the passing load measured (when it did)."""
    if passing is None or not passing.generation_tps:
        return memory
    return T("{memory}, {tps} tokens/s", "{memory_zh}，每秒 {tps} 个词元", memory=memory.render("en"),
             memory_zh=memory.render("zh"), tps=f"{passing.generation_tps:.1f}")


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text_of(value: Any) -> Text:
    """A stored sentence: ``{"en", "zh"}`` (language-neutral) or a string rendered in one language."""
    if isinstance(value, Mapping):
        return Text(str(value.get("en", "")), str(value.get("zh", value.get("en", ""))))
    return Text(str(value), str(value))


def attempt_from_cache(entry: Mapping[str, Any]) -> Attempt:
    reason = entry.get("reason")
    if reason is None and not entry.get("ok"):  # to_dict() form: the sentence sits in the diagnosis
        message = (entry.get("diagnosis") or {}).get("message")
        reason = message if message else None
    return Attempt(
        gpu_layers=int(entry["gpu_layers"]), ctx=int(entry["ctx"]), ok=bool(entry["ok"]),
        peak_rss_bytes=entry.get("peak_rss_bytes"), peak_vram_bytes=entry.get("peak_vram_bytes"),
        seconds=float(entry.get("seconds") or 0.0), load_seconds=entry.get("load_seconds"),
        cause=entry.get("cause"), reason=_text_of(reason) if reason else None,
        prompt_tokens=entry.get("prompt_tokens"), n_cpu_moe=int(entry.get("n_cpu_moe") or 0),
        full_context_rss_bytes=entry.get("full_context_rss_bytes"),
        prompt_tps=_number(entry.get("prompt_tps")), generation_tps=_number(entry.get("generation_tps")),
        generated_tokens=_count(entry.get("generated_tokens")),
    )


def result_from_cache(stored: Mapping[str, Any], plan: MemoryPlan | None) -> ProbeResult:
    result = ProbeResult.from_dict(stored, plan)
    result.cached = True
    return result
