"""What a full context adds to the RAM a test load measured: the probe's "safe" holds when the context fills.

A test load evaluates one prompt of about a micro-batch. llama.cpp clears its KV cache when it allocates it
(llama-kv-cache.cpp ``ggml_backend_buffer_clear``), so the whole cache is resident after the load. What a fuller
context still adds:
- the compute buffer. It is reserved for the worst case (a micro-batch over every cell), and ggml-alloc places each
  later graph's tensors where the worst case put them (ggml_gallocr_alloc_graph: "from the previous assignments"), so
  which of its pages a short prompt touched does not follow the cells it used. It is counted in full, at the plan's
  size or the size llama.cpp reported, whichever is larger; the part the test prompt touched is then counted twice
  (a few MiB, on the safe side).
- the server's bookkeeping per prompt token and the built-in engine's logits rows when it keeps them: the plan's
  overhead at the full context minus its overhead at the cells the test prompt used;
- llama-server's prompt cache, empty after one prompt, at its cap.
The projection is the measured peak plus that growth: the plan's full-context figure corrected by what the load
really measured. Measured on the KV-heavy generated model (16 KiB of KV cache per token), RSS after the test prompt
and after a prompt of 80 % of the context: built-in engine at 11008 tokens 270.3 -> 333.7 MiB, at 4096 tokens
161.9 -> 184.6 MiB; llama-server at 11008 tokens 206.4 -> 216.1 MiB.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.core.plan.compute import prompt_cache_bytes
from app.core.plan.estimate import DevicePlan, estimate_devices
from app.core.plan.kv import padded_cells
from app.core.plan.layers import normalize_gpu_layers

if TYPE_CHECKING:
    from app.core.launch.config import LaunchConfig
    from app.core.plan.budget import DeviceBudget
    from app.core.plan.memory import MemoryPlan


def _ram(devices: tuple[DevicePlan, ...]) -> DevicePlan:
    return next(d for d in devices if d.budget.kind == "cpu")


@dataclass(frozen=True)
class FullContextProjector:
    """Projects a test load's measured peak RSS to the same settings with the context full."""

    info: Any  # ModelInfo
    budgets: tuple[DeviceBudget, ...]
    slots: int = 1
    unified: bool = False

    @classmethod
    def from_plan(cls, info: Any, plan: MemoryPlan) -> FullContextProjector:
        """With the plan's own devices (the workers it already asked), slots and cache sharing."""
        return cls(info, tuple(d.budget for d in plan.devices), max(int(plan.slots), 1), bool(plan.kv_unified))

    def growth_bytes(self, config: LaunchConfig, prompt_tokens: int, reported_compute: int | None = None) -> int:
        """RAM the server will add at ``config`` once its context is full, over what a prompt of ``prompt_tokens``
        left resident. ``reported_compute``: the CPU compute buffer llama.cpp reported (None: its log did not
        say)."""
        layers = normalize_gpu_layers(int(config.gpu_layers), int(self.info.block_count))
        full = _ram(estimate_devices(self.info, config, layers, config.ctx, self.budgets)[1])
        used_ctx = min(self._used_ctx(prompt_tokens), int(config.ctx))
        used = _ram(estimate_devices(self.info, config, layers, used_ctx, self.budgets)[1])
        compute = max(full.compute_bytes, int(reported_compute or 0))
        # the plan counts the prompt cache at its cap in both; a test load leaves it empty
        return compute + max(full.overhead_bytes - used.overhead_bytes, 0) + prompt_cache_bytes(config)

    def _used_ctx(self, prompt_tokens: int) -> int:
        """The context whose cells per stream are those the prompt used (it ran in one slot)."""
        cells = padded_cells(max(int(prompt_tokens), 1))
        return cells if self.unified else cells * self.slots
