"""Per-device memory estimate for one (gpu_layers, ctx) pair: weights + KV + compute + overhead."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from app.core.launch.config import BACKEND_LLAMA_SERVER, LaunchConfig
from app.core.plan.budget import DeviceBudget, gpu_shares
from app.core.plan.cells import cache_layer_bytes, cells_for, checkpoint_bytes, kv_offloaded
from app.core.plan.compute import (
    GPU_CONTEXT_BYTES,
    GPU_HOST_OVERHEAD_BYTES,
    PARTIAL_OFFLOAD_FACTOR,
    all_logits_bytes,
    baseline_rss_bytes,
    compute_buffer_bytes,
    flash_attention_on,
    host_side_buffer_bytes,
    output_buffer_bytes,
    prompt_cache_bytes,
    resident_compute_bytes,
)
from app.core.plan.cpu_kernels import CpuKernels, for_engine
from app.core.plan.experts import expert_split
from app.core.plan.layers import CPU, LayerAssignment, assign_layers, slot_ranges, weights_by_device
from app.core.plan.layout import CacheLayout, cache_layout
from app.core.plan.projector import config_projector_bytes
from app.core.plan.repack import repack_extra_bytes
from app.core.text import T, Text, human_bytes


@dataclass(frozen=True)
class DevicePlan:
    budget: DeviceBudget
    layers: int  # repeating layers held by this device
    output_layer: bool
    weights_bytes: int
    kv_bytes: int
    compute_bytes: int
    overhead_bytes: int
    slots: tuple[tuple[int, int], ...] = ()  # runs of llama.cpp layer slots held (first, last); output = n_layer

    @property
    def total_bytes(self) -> int:
        return self.weights_bytes + self.kv_bytes + self.compute_bytes + self.overhead_bytes

    @property
    def spare_bytes(self) -> int:
        """Memory left on the device after the load (negative: it does not fit at all)."""
        return self.budget.free_bytes - self.total_bytes

    @property
    def fits(self) -> bool:
        return self.spare_bytes >= self.budget.keep_bytes

    def summary(self) -> Text:
        params = dict(device=self.budget.label, name=self.budget.name, need=human_bytes(self.total_bytes),
                      free=human_bytes(self.budget.free_bytes), spare=human_bytes(abs(self.spare_bytes)),
                      keep=human_bytes(self.budget.keep_bytes))
        if self.fits:
            return T("{device} ({name}): needs {need} of {free} free; fits with {spare} to spare.",
                     "{device}（{name}）：需要 {need}，可用 {free}；放得下，剩余 {spare}。", **params)
        if self.spare_bytes >= 0:
            return T("{device} ({name}): needs {need} of {free} free; only {spare} would be left, "
                     "less than the {keep} safety margin.",
                     "{device}（{name}）：需要 {need}，可用 {free}；只剩 {spare}，低于 {keep} 的安全余量。", **params)
        return T("{device} ({name}): needs {need} but only {free} is free; {spare} short.",
                 "{device}（{name}）：需要 {need}，但只有 {free} 可用；缺少 {spare}。", **params)

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        return {
            "device": self.budget.label,
            "kind": self.budget.kind,
            "index": self.budget.index,
            "name": self.budget.name,
            "uuid": self.budget.uuid,
            "simulated": self.budget.simulated,
            "layers": self.layers,
            "output_layer": self.output_layer,
            "layer_ranges": [list(run) for run in self.slots],
            "weights_bytes": self.weights_bytes,
            "kv_bytes": self.kv_bytes,
            "compute_bytes": self.compute_bytes,
            "overhead_bytes": self.overhead_bytes,
            "total_bytes": self.total_bytes,
            "free_bytes": self.budget.free_bytes,
            "keep_free_bytes": self.budget.keep_bytes,
            "spare_bytes": self.spare_bytes,
            "fits": self.fits,
            "summary": self.summary().render(lang),
        }


NO_SWA = CacheLayout((), (), (), ())


def kv_cells(config: LaunchConfig, ctx: int) -> int:
    """Cells of the full-context KV cache the server allocates for ``-c ctx`` (all streams together).

    The context is shared by the slots, not multiplied: llama.cpp pads n_ctx to 256; a unified cache (``-np``
    auto) has n_ctx cells, otherwise each of the N sequences gets pad256(n_ctx / N) cells. llama-cpp-python
    always runs one sequence. Sliding-window layers hold fewer (app.core.plan.cells).
    """
    return cells_for(config, ctx, NO_SWA).full_total


def engine_ctx(info: Any, ctx: int) -> int:
    """The context llama.cpp runs for ``-c ctx``: 0 (or less) means the model's trained length."""
    return int(ctx) if int(ctx) > 0 else int(getattr(info, "context_length", 0) or 4096)


def engine_kernels(config: LaunchConfig) -> CpuKernels:
    """The CPU kernels of the engine ``config`` starts (what its CPU backend copies depends on them)."""
    return for_engine(config.backend, config.server_bin if config.backend == BACKEND_LLAMA_SERVER else None)


PIPELINE_COPIES = 4  # GGML_SCHED_MAX_COPIES: llama.cpp's input copies with pipeline parallelism


def pipeline_extra_bytes(info: Any, config: LaunchConfig, layout: CacheLayout, cells: Any, first: bool) -> int:
    """What pipeline parallelism adds to one RPC worker's compute buffer (llama-context.cpp: on when the layers
    are split over several devices, every layer and the output offloaded, split mode layer, and every device
    has async compute and events, as ggml-rpc's have): the scheduler keeps PIPELINE_COPIES copies of each
    split's inputs. Measured here (llama.cpp b11434, two CPU workers, -fa auto, ub 512, n_embd 512): the masks
    and one hidden state per extra copy on a later device, the masks and four on the first (it takes the
    micro-batch from the processor): 33.05 and 24.04 MiB against 15.01 on one worker; -c 512: 27.05 and 18.04."""
    ub = cells.ubatch
    full, swa = layout.kv_layers(swa=False), layout.kv_layers(swa=True)
    mask = (2 if flash_attention_on(config) else 4) * ub * ((cells.full if full else 0) + (cells.swa if swa else 0))
    hidden = 4 * ub * int(info.embedding_length)
    return (PIPELINE_COPIES - 1) * (mask + (4 if first else 1) * hidden)


def _pipeline_parallel(config: LaunchConfig, assignment: LayerAssignment, gpus: Sequence[DeviceBudget]) -> bool:
    """llama.cpp's condition for pipeline parallelism, planned where workers take part (their devices always
    have async compute and events; for local GPUs alone the plan does not model it yet)."""
    used = sum(1 for p in range(len(gpus)) if assignment.layers_on(p) or assignment.output_device == p)
    return (any(g.is_worker for g in gpus) and used > 1 and assignment.gpu_layers > assignment.n_layer
            and config.split_mode == "layer" and kv_offloaded(config) and not config.n_cpu_moe)


def _gpu_plan(info, config, budget, position, assignment, weights, kv_per_layer, compute_full) -> DevicePlan:
    layers = assignment.layers_on(position)
    kv_layers = layers if kv_offloaded(config) else []
    holds_output = assignment.output_device == position
    # with 0 layers the GPU is left out of the plan: if it cannot even hold a CUDA context, the model can
    # still run with the GPU hidden from the engine
    used = bool(layers) or holds_output
    partial = assignment.offloaded_layers < assignment.n_layer and assignment.offloaded_layers > 0
    # the partial-offload growth is CUDA's; a CPU worker's buffer stayed below the full size here (13 and 6 MiB
    # against 15 with -ngl 4 over two workers), so a worker is planned at the full size
    grows = partial and not budget.is_worker
    compute = int(compute_full * (PARTIAL_OFFLOAD_FACTOR if grows else 1.0)) if used else 0
    # an RPC worker holds buffers only: no CUDA context on this side (its own, if any, is its computer's)
    overhead = (0 if budget.is_worker else GPU_CONTEXT_BYTES) if used else 0
    return DevicePlan(budget, len(layers), holds_output, weights.get(position, 0),
                      sum(kv_per_layer[i] for i in kv_layers), compute, overhead,
                      tuple(slot_ranges(assignment, position)))


def _cpu_plan(info, config, budget, assignment, weights, kv_per_layer, compute_full, has_gpus, cells,
              checkpoints, *, cpu_runs_experts: bool = False) -> DevicePlan:
    layers = assignment.layers_on(CPU)
    kv_layers = layers if kv_offloaded(config) else range(assignment.n_layer)  # -nkvo: every layer's KV in RAM
    runs_layers = bool(layers) or not assignment.output_on_gpu or cpu_runs_experts
    compute = compute_full if runs_layers else host_side_buffer_bytes(info, cells)
    overhead = (baseline_rss_bytes(config, info, cells.full_total) + (GPU_HOST_OVERHEAD_BYTES if has_gpus else 0)
                + output_buffer_bytes(info, cells) + all_logits_bytes(info, config, cells.full_total) + checkpoints
                + prompt_cache_bytes(config))
    return DevicePlan(budget, len(layers), not assignment.output_on_gpu, weights.get(CPU, 0),
                      sum(kv_per_layer[i] for i in kv_layers), compute, overhead, tuple(slot_ranges(assignment, CPU)))


def estimate_devices(info: Any, config: LaunchConfig, gpu_layers: int, ctx: int,
                     budgets: Sequence[DeviceBudget]) -> tuple[LayerAssignment, tuple[DevicePlan, ...]]:
    """Estimate every device for ``gpu_layers`` and ``ctx``; budgets: GPUs first, RAM last."""
    gpus = [b for b in budgets if b.kind == "gpu"]
    ram = next(b for b in budgets if b.kind == "cpu")
    assignment = assign_layers(int(info.block_count), gpu_layers if gpus else 0, gpu_shares(config, gpus))
    weights = weights_by_device(info, assignment, sparse_input=config.load_mode == "mmap")
    experts_in_ram = _keep_experts_in_ram(info, assignment, weights, config.n_cpu_moe)
    weights[CPU] = weights.get(CPU, 0) + repack_extra_bytes(info, assignment, mmap=config.load_mode == "mmap",
                                                            kernels=engine_kernels(config))
    layout = cache_layout(info)
    cells = cells_for(config, engine_ctx(info, ctx), layout)
    kv_per_layer = cache_layer_bytes(layout, cells, config.cache_type_k, config.cache_type_v,
                                     flash_attention_on(config))
    kv_per_layer += [0] * (int(info.block_count) - len(kv_per_layer))  # MTP / NextN layers: no KV in this context
    compute_full = compute_buffer_bytes(info, config, layout, cells)
    plans = [_gpu_plan(info, config, g, p, assignment, weights, kv_per_layer, compute_full)
             for p, g in enumerate(gpus)]
    if _pipeline_parallel(config, assignment, gpus):
        used = [i for i, plan in enumerate(plans) if plan.compute_bytes]
        plans = [replace(plan, compute_bytes=plan.compute_bytes + pipeline_extra_bytes(
            info, config, layout, cells, first=i == used[0])) if i in used else plan for i, plan in enumerate(plans)]
    _add_projector(plans, config, assignment, weights)
    checkpoints = checkpoint_bytes(layout, cells, config, config.cache_type_k, config.cache_type_v)
    local_gpus = any(not g.is_worker for g in gpus)  # workers add no GPU driver's host memory here
    cpu_compute = resident_compute_bytes(info, config, layout, cells)
    plans.append(_cpu_plan(info, config, ram, assignment, weights, kv_per_layer, cpu_compute, local_gpus, cells,
                           checkpoints, cpu_runs_experts=experts_in_ram > 0))
    return assignment, tuple(plans)


def _add_projector(gpu_plans: list[DevicePlan], config: LaunchConfig, assignment: LayerAssignment,
                   weights: dict[int, int]) -> None:
    """A vision projector: on the first GPU when any layer is offloaded (llama-server's default), else in RAM
    (the app passes --no-mmproj-offload then); added to ``weights`` (RAM) or the GPU plan's weights."""
    size = config_projector_bytes(config)
    if not size:
        return
    if gpu_plans and assignment.offloaded_layers > 0:
        first = gpu_plans[0]
        gpu_plans[0] = replace(first, weights_bytes=first.weights_bytes + size)
    else:
        weights[CPU] = weights.get(CPU, 0) + size


def _keep_experts_in_ram(info: Any, assignment: LayerAssignment, weights: dict[int, int], n_cpu_moe: int) -> int:
    """``--n-cpu-moe N``: the expert tensors of blocks 0..N-1 that would be on a GPU go to RAM instead (their
    attention, router and shared experts stay); ``weights`` is changed in place. The bytes moved."""
    if n_cpu_moe <= 0:
        return 0
    split = expert_split(info)
    moved = 0
    for il in range(min(n_cpu_moe, assignment.n_layer, len(split.layers))):
        device, size = assignment.layer_device[il], split.layers[il].expert_bytes
        if device != CPU and size:
            weights[device] = weights.get(device, 0) - size
            weights[CPU] = weights.get(CPU, 0) + size
            moved += size
    return moved
