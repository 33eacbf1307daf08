"""Sentences for running out of memory that the log reports: graphics memory, context (KV cache), RAM."""

from __future__ import annotations

from app.core.diagnosis.fixes import current_ctx, memory_fix
from app.core.diagnosis.situation import Situation
from app.core.text import T, Text, human_bytes

Parts = tuple[Text, Text, dict, bool]
SMALL_UBATCH = 512


def _restartable(s: Situation) -> bool:
    """Out of memory while loading repeats on restart; out of memory while serving may not (one big request)."""
    return s.was_ready is True


def gpu_out_of_memory(s: Situation) -> Parts:
    fix, hint = memory_fix(s.config, s.facts, s.block_count, gpu_first=True, plan=s.plan)
    size, device = s.facts.failed_alloc_bytes, s.facts.failed_alloc_device
    if s.was_ready:
        message = T("The graphics card ran out of memory while answering, and the server stopped.",
                    "回答过程中显卡显存不足，服务器已停止。")
    elif size and s.facts.gpu_free_bytes and s.facts.gpu_free_bytes < size:
        message = T("The graphics card ran out of memory while loading the model: "
                    "it needed {size} with only {free} free.",
                    "加载模型时显卡显存不足：需要 {size}，但只有 {free} 可用。",
                    size=human_bytes(size), free=human_bytes(s.facts.gpu_free_bytes))
    elif size:
        message = T("The graphics card ran out of memory while loading the model: "
                    "it could not reserve {size} more on {device}.",
                    "加载模型时显卡显存不足：无法在 {device} 上再分配 {size}。",
                    size=human_bytes(size), device=device or "GPU")
    else:
        message = T("The graphics card ran out of memory while loading the model.", "加载模型时显卡显存不足。")
    return message, hint, fix, _restartable(s)


def _compute_buffers(s: Situation) -> bool:
    line = s.hit.line.lower() if s.hit else ""
    return "compute" in line or "gallocr" in line


def context_out_of_memory(s: Situation) -> Parts:
    fix, hint = memory_fix(s.config, s.facts, s.block_count, gpu_first=False, plan=s.plan)
    ctx = current_ctx(s.config, s.facts)
    ubatch = getattr(s.config, "ubatch", None)
    if _compute_buffers(s) and isinstance(ubatch, int) and ubatch > SMALL_UBATCH:
        # the compute buffer grows with the micro-batch; 2048 often fails where 512 fits (ll#18354)
        fix = {**fix, "ubatch": SMALL_UBATCH}
        one_chat = "parallel" in fix
        hint = T("Lower the context to {ctx} tokens and the micro-batch to {ub}"
                 + (", serve one chat at a time" if one_chat else "")
                 + ", then restart.",
                 "把上下文长度降到 {ctx} 个词元、微批大小降到 {ub}"
                 + ("，并且一次只处理一个对话" if one_chat else "")
                 + "，然后重新启动。",
                 ctx=fix.get("ctx", ctx), ub=SMALL_UBATCH)
    if _compute_buffers(s) and ctx:
        message = T("There was not enough memory for the working buffers of the context ({ctx} tokens).",
                    "内存不足以分配 {ctx} 个词元上下文所需的计算缓冲区。", ctx=ctx)
        return message, hint, fix, _restartable(s)
    on_gpu = (s.facts.failed_alloc_device or "").upper().startswith(("GPU", "CUDA", "ROCM", "VULKAN", "METAL", "SYCL"))
    needed = human_bytes(s.facts.failed_alloc_bytes) if s.facts.failed_alloc_bytes else None
    if ctx and needed:
        where_en, where_zh = ("graphics memory", "显存") if on_gpu else ("memory", "内存")
        message = T("There was not enough " + where_en + " for the conversation memory (KV cache) of {ctx} tokens: "
                    "it needed {size}.",
                    where_zh + "不足以存放 {ctx} 个词元的对话缓存（KV 缓存）：需要 {size}。", ctx=ctx, size=needed)
    elif ctx:
        message = T("There was not enough memory for the conversation memory (KV cache) of {ctx} tokens.",
                    "没有足够的内存存放 {ctx} 个词元的对话缓存（KV 缓存）。", ctx=ctx)
    else:
        message = T("There was not enough memory to set up the conversation memory (context).",
                    "没有足够的内存来建立对话缓存（上下文）。")
    return message, hint, fix, _restartable(s)


def ram_out_of_memory(s: Situation) -> Parts:
    fix, hint = memory_fix(s.config, s.facts, s.block_count, gpu_first=False, plan=s.plan)
    return (T("The computer ran out of memory (RAM) for this model and these settings.",
              "电脑内存（RAM）不足以运行该模型和当前设置。"), hint, fix, _restartable(s))


BUILDERS = {
    "gpu_out_of_memory": gpu_out_of_memory, "context_out_of_memory": context_out_of_memory,
    "ram_out_of_memory": ram_out_of_memory,
}
