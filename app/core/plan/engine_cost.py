"""What the built-in engine costs over llama-server for one model and one config, from the plans of both.

The app starts the built-in engine with the sliding window and flash attention as llama-server sizes them
(app/core/launch/embedded_server.py); what remains is mostly the Python web server around it
(BACKEND_BASELINE_RSS) and llama-cpp-python's output buffer for a whole micro-batch of logits, against
llama-server's vocabulary bookkeeping and the weights it repacks for this processor's kernels.
benchmarks/bench_engines.py measures both engines side by side.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from app.core.launch.config import BACKEND_EMBEDDED, BACKEND_LLAMA_SERVER, LaunchConfig
from app.core.plan.budget import DeviceBudget
from app.core.plan.estimate import estimate_devices
from app.core.problem import UserError
from app.core.text import T, Text

logger = logging.getLogger(__name__)

MiB = 1024 * 1024
SAME_MIB = 5  # closer than this, the engines are "about the same": the plan is not that precise


def planned_total(info: Any, config: LaunchConfig, gpu_layers: int, budgets: Sequence[DeviceBudget]) -> int:
    """Every device's planned total for ``config`` (RAM and graphics memory together)."""
    return sum(device.total_bytes for device in estimate_devices(info, config, gpu_layers, config.ctx, budgets)[1])


def built_in_extra_bytes(info: Any, config: LaunchConfig, gpu_layers: int,
                         budgets: Sequence[DeviceBudget]) -> int | None:
    """How much more (negative: less) the built-in engine is planned to use than llama-server with the same
    model, context, layers and cache types, one request at a time and no extra arguments (what both engines
    share). None when ``config`` is not the built-in engine's."""
    if config.backend != BACKEND_EMBEDDED:
        return None
    shared = config.with_changes(parallel=1, extra_args=())
    server = shared.with_changes(backend=BACKEND_LLAMA_SERVER, server_bin=_llama_server_here(config))
    return planned_total(info, shared, gpu_layers, budgets) - planned_total(info, server, gpu_layers, budgets)


def _llama_server_here(config: LaunchConfig) -> str | None:
    """The llama-server the user would get: its build record says which weights it repacks for this processor."""
    if config.server_bin:
        return config.server_bin
    from app.core.launch.discovery import find_llama_server

    try:
        return str(find_llama_server(None))
    except UserError as error:  # none here: planned with this processor's flags
        logger.debug("no llama-server to compare the built-in engine with: %s", error.message.render("en"))
        return None


def built_in_extra_text(extra_bytes: int | None) -> Text | None:
    """The sentence the plan adds when the user picks the built-in engine (None: not that engine)."""
    if extra_bytes is None:
        return None
    mib = round(extra_bytes / MiB)
    if mib >= SAME_MIB:
        return T("The built-in engine uses about {n} MiB more than llama-server for this model.",
                 "对这个模型，内置引擎比 llama-server 多用约 {n} MiB 内存。", n=mib)
    if mib <= -SAME_MIB:
        return T("The built-in engine uses about {n} MiB less than llama-server for this model.",
                 "对这个模型，内置引擎比 llama-server 少用约 {n} MiB 内存。", n=-mib)
    return T("The built-in engine uses about as much memory as llama-server for this model.",
             "对这个模型，内置引擎用的内存与 llama-server 差不多。")


def engine_cost_notes(info: Any, config: LaunchConfig, gpu_layers: int,
                      budgets: Sequence[DeviceBudget]) -> tuple[Text, ...]:
    text = built_in_extra_text(built_in_extra_bytes(info, config, gpu_layers, budgets))
    return () if text is None else (text,)
