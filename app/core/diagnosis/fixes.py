"""Suggested LaunchConfig changes, computed from the current settings and what the log revealed."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

from app.core.diagnosis.log_facts import LogFacts
from app.core.text import T, Text

MIN_CTX = 512
CTX_STEP = 256
GPU_LAYER_CUT = 0.2  # drop about a fifth of the GPU layers per suggestion


def _config_value(config: Any, name: str) -> Any:
    return getattr(config, name, None) if config is not None else None


def current_gpu_layers(config: Any, facts: LogFacts, block_count: int | None) -> int | None:
    """Layers on the GPU now; -1 ("all") resolved through the log or the model's block count."""
    layers = _config_value(config, "gpu_layers")
    if isinstance(layers, int) and layers >= 0:
        if facts.offload_total and layers > facts.offload_total:
            return facts.offload_total  # asked for more layers than exist: only that many were placed
        return layers
    return facts.offloaded_layers or block_count or facts.n_layer


def _plan_limit(plan: Any, name: str) -> int | None:
    """What the memory plan (app.core.plan.memory.MemoryPlan) estimated still fits, when one is given."""
    value = getattr(plan, name, None) if plan is not None else None
    return value if isinstance(value, int) and value >= 0 else None


def fewer_gpu_layers(config: Any, facts: LogFacts, block_count: int | None,
                     plan: Any = None) -> tuple[dict[str, Any], Text] | None:
    current = current_gpu_layers(config, facts, block_count or _plan_limit(plan, "n_layer"))
    if not current:
        return None
    suggested = max(0, current - max(1, math.ceil(current * GPU_LAYER_CUT)))
    planned = _plan_limit(plan, "max_gpu_layers")
    if planned is not None and planned < suggested:
        suggested = planned  # the plan's estimate is lower still: start from there
    hint = T(
        "Put fewer layers on the graphics card ({new} instead of {old}) and restart.",
        "减少放到显卡上的层数（从 {old} 层改为 {new} 层），然后重新启动。",
        new=suggested, old=current,
    )
    return {"gpu_layers": suggested}, hint


def current_ctx(config: Any, facts: LogFacts) -> int | None:
    ctx = _config_value(config, "ctx")
    if isinstance(ctx, int) and ctx > 0:
        return ctx
    return facts.n_ctx


def smaller_context(config: Any, facts: LogFacts, plan: Any = None) -> tuple[dict[str, Any], Text] | None:
    """Half the context (a multiple of 256, at least 512; lower if the plan says so) and one chat at a time."""
    fix: dict[str, Any] = {}
    ctx = current_ctx(config, facts)
    if ctx and ctx > MIN_CTX:
        fix["ctx"] = max(MIN_CTX, (ctx // 2) // CTX_STEP * CTX_STEP)
        planned = _plan_limit(plan, "max_ctx")
        if planned is not None and planned < fix["ctx"]:
            fix["ctx"] = max(MIN_CTX, planned // CTX_STEP * CTX_STEP)
    parallel = _config_value(config, "parallel")
    if isinstance(parallel, int) and parallel > 1:
        fix["parallel"] = 1
    if not fix:
        return None
    return fix, _context_hint(fix)


def _context_hint(fix: dict[str, Any]) -> Text:
    if "ctx" in fix and "parallel" in fix:
        return T(
            "Lower the context to {ctx} tokens, serve one chat at a time, and restart.",
            "把上下文长度降到 {ctx} 个词元，并且一次只处理一个对话，然后重新启动。",
            ctx=fix["ctx"],
        )
    if "ctx" in fix:
        return T("Lower the context to {ctx} tokens and restart.", "把上下文长度降到 {ctx} 个词元，然后重新启动。",
                 ctx=fix["ctx"])
    return T("Serve one chat at a time (parallel 1) and restart.", "改为一次只处理一个对话（并发数 1），然后重新启动。")


def memory_fix(config: Any, facts: LogFacts, block_count: int | None, *, gpu_first: bool,
               plan: Any = None) -> tuple[dict[str, Any], Text]:
    """The first applicable memory relief; falls back to a plain instruction when nothing can shrink."""
    layers = partial(fewer_gpu_layers, config, facts, block_count, plan)
    context = partial(smaller_context, config, facts, plan)
    order = (layers, context) if gpu_first else (context, layers)
    for make in order:
        result = make()
        if result:
            return result
    return {}, T(
        "Close other programs that use memory, or choose a smaller model (a lower quantisation such as Q4_K_M).",
        "关闭其他占用内存的程序，或选择更小的模型（例如 Q4_K_M 这类更低的量化）。",
    )


def drop_extra_argument(config: Any, arg: str | None) -> dict[str, Any] | None:
    """Remove a rejected flag (and its value) from the user's extra arguments, if it came from there."""
    extra = list(_config_value(config, "extra_args") or ())
    if not arg or not extra:
        return None
    flag = arg.split("=", 1)[0]
    for index, item in enumerate(extra):
        if item.split("=", 1)[0] == flag:
            end = index + 1
            if "=" not in item and end < len(extra) and not extra[end].startswith("-"):
                end += 1
            return {"extra_args": extra[:index] + extra[end:]}
    return None
