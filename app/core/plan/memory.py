"""Memory plan: will this model with this launch config fit, per device, and what is the most that fits.

The plan is an estimate (like llama.cpp --fit, Ollama, gguf-parser); its job here is to seed the
live probe (app.core.probe), which then proves the answer with real loads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.launch.config import BACKEND_LLAMA_SERVER, LaunchConfig
from app.core.plan.budget import DeviceBudget, Margins, device_budgets, gpu_shares
from app.core.plan.cells import cache_layer_bytes, cells_for, context_bytes_per_token, sequences
from app.core.plan.compute import all_logits_bytes, flash_attention_on
from app.core.plan.engine_cost import engine_cost_notes
from app.core.plan.estimate import DevicePlan, engine_ctx, estimate_devices, kv_cells
from app.core.plan.gpu_split import propose_tensor_split, split_notes
from app.core.plan.kv import KV_CELL_PADDING
from app.core.plan.layers import normalize_gpu_layers
from app.core.plan.layout import PURE_RECURRENT, cache_layout
from app.core.problem import UserError
from app.core.text import T, Text, human_bytes


@dataclass(frozen=True)
class MemoryPlan:
    model: str
    backend: str
    n_layer: int
    ctx: int
    gpu_layers: int  # normalized: 0 .. n_layer + 1 (n_layer + 1 = every layer and the output layer)
    parallel: int
    ubatch: int
    cache_type_k: str
    cache_type_v: str
    flash_attn: bool
    kv_bytes_per_token: float
    devices: tuple[DevicePlan, ...]
    max_gpu_layers: int | None  # highest -ngl that fits at ``ctx`` (None: not even 0 fits)
    max_ctx: int | None  # highest ctx (multiple of 256) that fits at ``gpu_layers`` (None: not even 256)
    recommended_gpu_layers: int
    recommended_ctx: int | None
    notes: tuple[Text, ...] = field(default_factory=tuple)
    # how the engine will hold the context (app.core.plan.cells): sequences, one shared cache or one per slot,
    # cells of the full-context cache and of the sliding-window cache (None: no sliding-window layers)
    slots: int = 1
    kv_unified: bool = False
    kv_cells: int = 0
    swa_cells: int | None = None
    # several GPUs: each GPU's share of the layers as llama.cpp reads it, and a tensor split proposed for them
    gpu_shares: tuple[float, ...] = ()
    proposed_tensor_split: tuple[float, ...] = ()

    @property
    def fits(self) -> bool:
        return all(d.fits for d in self.devices)

    @property
    def has_gpu(self) -> bool:
        return any(d.budget.kind == "gpu" for d in self.devices)

    def device(self, label: str) -> DevicePlan:
        return next(d for d in self.devices if d.budget.label == label)

    def recommendation_text(self) -> Text:
        if self.recommended_ctx is None:
            return T("Plan: this model does not fit in the memory available, not even with 256 tokens of context.",
                     "估算：即使只用 256 个词元的上下文，这个模型也放不进可用内存。")
        if self.has_gpu and self.recommended_gpu_layers > 0:
            return T("Plan: put {layers} of {total} layers on the GPU with {ctx} tokens of context.",
                     "估算：把 {total} 层中的 {layers} 层放到 GPU 上，上下文 {ctx} 个词元。",
                     layers=min(self.recommended_gpu_layers, self.n_layer + 1), total=self.n_layer + 1,
                     ctx=self.recommended_ctx)
        return T("Plan: run on the CPU with {ctx} tokens of context.", "估算：在 CPU 上运行，上下文 {ctx} 个词元。",
                 ctx=self.recommended_ctx)

    def summary(self) -> list[Text]:
        verdict = (T("The requested settings fit (estimate).", "所请求的设置放得下（估算）。") if self.fits else
                   T("The requested settings do not fit (estimate).", "所请求的设置放不下（估算）。"))
        return [verdict] + [d.summary() for d in self.devices] + [self.recommendation_text(), *self.notes]

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        return {
            "model": self.model, "backend": self.backend, "n_layer": self.n_layer, "ctx": self.ctx,
            "gpu_layers": self.gpu_layers, "parallel": self.parallel, "ubatch": self.ubatch,
            "cache_type_k": self.cache_type_k, "cache_type_v": self.cache_type_v, "flash_attn": self.flash_attn,
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "fits": self.fits,
            "devices": [d.to_dict(lang) for d in self.devices],
            "max_gpu_layers": self.max_gpu_layers, "max_ctx": self.max_ctx,
            "recommended_gpu_layers": self.recommended_gpu_layers, "recommended_ctx": self.recommended_ctx,
            "slots": self.slots, "kv_unified": self.kv_unified, "kv_cells": self.kv_cells,
            "swa_cells": self.swa_cells,
            "gpu_shares": list(self.gpu_shares), "proposed_tensor_split": list(self.proposed_tensor_split),
            "summary": [t.render(lang) for t in self.summary()],
        }


def fits_all(info: Any, config: LaunchConfig, gpu_layers: int, ctx: int, budgets: list[DeviceBudget]) -> bool:
    return all(d.fits for d in estimate_devices(info, config, gpu_layers, ctx, budgets)[1])


def highest_fitting_layers(info: Any, config: LaunchConfig, ctx: int, budgets: list[DeviceBudget]) -> int | None:
    for ngl in range(int(info.block_count) + 1, -1, -1):
        if fits_all(info, config, ngl, ctx, budgets):
            return ngl
    return None


def highest_fitting_ctx(info: Any, config: LaunchConfig, gpu_layers: int, upper: int,
                        budgets: list[DeviceBudget]) -> int | None:
    """Largest multiple of 256 in [256, upper] that fits (memory only grows with ctx: binary search)."""
    lo, hi = 0, max(upper // KV_CELL_PADDING, 0)  # in steps of 256; lo = known fit (0 = none)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits_all(info, config, gpu_layers, mid * KV_CELL_PADDING, budgets):
            lo = mid
        else:
            hi = mid - 1
    return lo * KV_CELL_PADDING if lo > 0 else None


def _notes(info: Any, config: LaunchConfig, budgets: list[DeviceBudget]) -> tuple[Text, ...]:
    notes = []
    if any(b.simulated and b.kind == "gpu" for b in budgets):
        notes.append(T("The GPU is simulated from the VRAM budget you gave; no real GPU was measured.",
                       "GPU 是按你给的显存预算模拟的，没有测量真实 GPU。"))
    if not flash_attention_on(config) and config.cache_type_v not in ("f16", "f32", "bf16"):
        notes.append(T("A quantized V cache needs flash attention; turn it on or the load will fail.",
                       "量化的 V 缓存需要启用 flash attention，否则加载会失败。"))
    logits = all_logits_bytes(info, config, kv_cells(config, config.ctx))
    if logits:
        notes.append(T("The built-in engine keeps the scores of every token in the context ({size} at this context); "
                       "that memory fills up as a conversation grows.",
                       "内置引擎会保存上下文中每个词元的分数（此上下文下为 {size}），这部分内存随对话变长而增加。",
                       size=human_bytes(logits)))
    full_size_swa = _full_size_swa_bytes(info, config)
    if full_size_swa:
        notes.append(T("The built-in engine needs {size} more memory than llama-server here: some of this model's "
                       "layers only look at the last part of the conversation, yet with these settings the built-in "
                       "engine keeps room for the whole context in them.",
                       "内置引擎在这里比 llama-server 多用 {size} 内存：这个模型有些层只看对话的最近一段，"
                       "在这些设置下内置引擎却在这些层里为整个上下文留出空间。",
                       size=human_bytes(full_size_swa)))
    if config.ctx > int(info.context_length or config.ctx):
        notes.append(T("The context {ctx} is longer than the model was trained for ({train}).",
                       "上下文 {ctx} 超过了模型训练时的长度（{train}）。", ctx=config.ctx, train=info.context_length))
    return tuple(notes)


def _full_size_swa_bytes(info: Any, config: LaunchConfig) -> int:
    """What llama-cpp-python's full-size SWA cache costs over a window-sized one (0: not that case)."""
    layout = cache_layout(info)
    if not layout.has_swa or config.backend == BACKEND_LLAMA_SERVER:
        return 0
    flash = flash_attention_on(config)
    window = config.with_changes(backend=BACKEND_LLAMA_SERVER, parallel=1, extra_args=())
    full = sum(cache_layer_bytes(layout, cells_for(config, config.ctx, layout), config.cache_type_k,
                                 config.cache_type_v, flash))
    return full - sum(cache_layer_bytes(layout, cells_for(window, config.ctx, layout), config.cache_type_k,
                                        config.cache_type_v, flash))


def _require_shape(info: Any) -> None:
    # recurrent models (mamba, rwkv) have no attention heads: no key / value lengths to ask for
    recurrent = getattr(info, "architecture", None) in PURE_RECURRENT
    needed = ("block_count", "embedding_length", "vocab_size") + (() if recurrent else ("key_length", "value_length"))
    missing = [name for name in needed if not getattr(info, name, None)]
    if missing or not (info.head_count_kv or recurrent):
        raise UserError(
            T("This model file does not describe its shape ({fields}), so its memory cannot be planned.",
              "这个模型文件没有写明它的结构（{fields}），无法估算内存。", fields=", ".join(missing) or "head_count_kv"),
            T("Use a GGUF produced by a recent llama.cpp converter.", "请使用较新的 llama.cpp 转换工具生成的 GGUF。"))


def make_plan(info: Any, config: LaunchConfig, hw: Any, *, vram_budget: int | None = None,
              ram_budget: int | None = None, margins: Margins | None = None) -> MemoryPlan:
    """Estimate memory per device for ``config`` and the most layers / context expected to fit."""
    _require_shape(info)
    budgets = device_budgets(hw, vram_budget=vram_budget, ram_budget=ram_budget, margins=margins,
                             workers=config.rpc_workers)
    has_gpu = any(b.kind == "gpu" for b in budgets)
    n_layer = int(info.block_count)
    gpu_layers = normalize_gpu_layers(int(config.gpu_layers), n_layer) if has_gpu else 0
    _, devices = estimate_devices(info, config, gpu_layers, config.ctx, budgets)
    gpus = [b for b in budgets if b.kind == "gpu"]
    max_layers = highest_fitting_layers(info, config, config.ctx, budgets) if has_gpu else (
        0 if fits_all(info, config, 0, config.ctx, budgets) else None)
    upper = max(int(config.ctx), int(info.context_length or 0))
    max_ctx = highest_fitting_ctx(info, config, gpu_layers, upper, budgets)
    if max_layers is not None:
        rec_layers, rec_ctx = max_layers, config.ctx
    else:
        rec_layers = 0
        rec_ctx = highest_fitting_ctx(info, config, 0, config.ctx, budgets)
    layout = cache_layout(info)
    cells = cells_for(config, engine_ctx(info, config.ctx), layout)
    return MemoryPlan(
        model=str(info.path), backend=config.backend, n_layer=n_layer, ctx=config.ctx, gpu_layers=gpu_layers,
        parallel=config.parallel, ubatch=config.ubatch, cache_type_k=config.cache_type_k,
        cache_type_v=config.cache_type_v, flash_attn=flash_attention_on(config),
        kv_bytes_per_token=float(context_bytes_per_token(layout, config, config.cache_type_k, config.cache_type_v)),
        devices=devices, max_gpu_layers=max_layers, max_ctx=max_ctx,
        recommended_gpu_layers=rec_layers, recommended_ctx=rec_ctx,
        notes=(_notes(info, config, budgets) + engine_cost_notes(info, config, gpu_layers, budgets)
               + split_notes(config, n_layer, rec_layers, gpus)),
        slots=cells.n_seq, kv_unified=sequences(config).unified, kv_cells=cells.full_total,
        swa_cells=cells.swa_total if layout.has_swa else None,
        gpu_shares=tuple(gpu_shares(config, gpus)), proposed_tensor_split=propose_tensor_split(info, config, budgets),
    )


__all__ = ["MemoryPlan", "DevicePlan", "Margins", "make_plan", "kv_cells", "human_bytes"]
