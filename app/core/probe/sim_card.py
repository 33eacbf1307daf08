"""A simulated graphics card for probe drills (tests, benchmarks): a ``run_probe`` runner that judges each candidate
with the plan's own memory model plus what the plan cannot know, and reports speeds from a memory-bandwidth model.

Memory: the GPU holds the plan's estimate × (1 + ``error``) + ``hidden`` (other programs); a load passes when that and
the probe's VRAM margin fit the card. Speed: generating a token reads every weight of its layer once, except the
experts, of which only the routed share is read; each byte is read at its device's bandwidth (a GPU's is ~10× a
processor's). A card filled above ``spill_above`` of its memory is slowed the way drivers that spill into system
memory slow it. A card with ``shared_memory`` (an NVIDIA driver on Windows, issue 28) does not fail a load that is too
big: the driver moves what does not fit into shared system memory, the load passes, its VRAM reading stays within the
margin, and generation slows by ``shared_slowdown`` ("roughly an order of magnitude" in the field, spill.py). The
numbers are a model, labelled as such wherever they are shown; real ones come from real loads.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from app.core.hardware.gpu import GpuInfo
from app.core.hardware.report import HardwareReport
from app.core.launch.backends import BackendInfo
from app.core.launch.config import LaunchConfig
from app.core.plan.budget import Margins, device_budgets
from app.core.plan.estimate import estimate_devices
from app.core.plan.experts import LayerWeights, expert_split
from app.core.plan.layers import CPU
from app.core.probe.attempt import Attempt

GB = 1000**3
GiB = 1024**3
# a llama-server build with a CUDA backend, for run_probe(backend=...) with a simulated runner
SIM_CUDA_BACKEND = BackendInfo("llama-server", ("llama-server",), "version: 9999 (sim)", 9999, ("CPU", "CUDA"),
                               frozenset(), "/health", "/tokenize", True, "/sim/llama-server")


def simulated_gpu_report(vram: int, os_name: str = "Linux") -> HardwareReport:
    """A machine with one empty card of ``vram`` bytes and 64 GiB of RAM (``os_name`` "Windows": one whose driver
    spills into shared memory, for the spill rule)."""
    gpu = GpuInfo(0, "Sim GPU", "GPU-sim", vram, vram, 0, [], "999.9", "12.4", "8.9")
    return HardwareReport(os_name, "6", False, False, False, None, 64 * GiB, 64 * GiB, "sim", 8, 16, [], [gpu], [])


@dataclass
class SimCard:
    info: Any
    vram: int
    error: float = 0.0  # how wrong the plan is about real usage
    hidden: int = 0  # VRAM other programs hold
    gpu_bandwidth: float = 400 * GB  # bytes/s, an RTX 2080-class card
    cpu_bandwidth: float = 40 * GB  # dual-channel DDR4
    spill_above: float = 0.97  # share of the card above which it slows down
    spill_slowdown: float = 0.4
    shared_memory: int = 0  # system memory the driver spills into instead of failing (0: a load too big fails)
    shared_slowdown: float = 0.1  # generation on a spilled card ("roughly an order of magnitude", spill.py)
    generated_tokens: int = 16  # the test request's (request.GENERATED_TOKENS)
    calls: list[tuple[int, int, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.budgets = device_budgets(None, vram_budget=self.vram, ram_budget=512 * GB)
        self.split = expert_split(self.info)
        if not any(layer.other_bytes or layer.expert_bytes for layer in self.split.layers):  # no tensor table
            layers = tuple(LayerWeights(0, int(size)) for size in getattr(self.info, "layer_bytes", None) or ())
            if len(layers) == len(self.split.layers):
                self.split = replace(self.split, layers=layers)

    def vram_use(self, config: LaunchConfig) -> float:
        gpu = estimate_devices(self.info, config, config.gpu_layers, config.ctx, self.budgets)[1][0]
        return gpu.total_bytes * (1 + self.error) + self.hidden

    def fits(self, config: LaunchConfig) -> bool:
        """The load fits the card with its margin (no spill)."""
        return self.vram_use(config) + Margins().vram_keep(self.vram) <= self.vram

    def spills(self, config: LaunchConfig) -> bool:
        """Too big for the card, but the driver puts the rest into shared memory instead of failing."""
        return self.shared_memory > 0 and not self.fits(config) and self.vram_use(config) <= (
            self.vram + self.shared_memory)

    def passes(self, config: LaunchConfig) -> bool:
        return self.fits(config) or self.spills(config)

    def vram_reading(self, config: LaunchConfig) -> int:
        """What the VRAM reading shows: a spilled load looks as if it fitted within the margin."""
        use = self.vram_use(config)
        return int(min(use, self.vram - Margins().vram_keep(self.vram)) if self.spills(config) else use)

    def generation_tps(self, config: LaunchConfig) -> float:
        assignment = estimate_devices(self.info, config, config.gpu_layers, config.ctx, self.budgets)[0]
        routed = (self.split.expert_used_count / self.split.expert_count) if self.split.expert_count else 1.0
        gpu_bytes = cpu_bytes = 0.0
        for il, layer in enumerate(self.split.layers):
            on_gpu = assignment.layer_device[il] != CPU
            experts_in_ram = il < config.n_cpu_moe
            other, experts = layer.other_bytes, layer.expert_bytes * routed
            gpu_bytes += other if on_gpu else 0
            cpu_bytes += other if not on_gpu else 0
            gpu_bytes += experts if on_gpu and not experts_in_ram else 0
            cpu_bytes += experts if not on_gpu or experts_in_ram else 0
        output = int(self.info.non_layer_bytes.get("output.weight", 0))
        gpu_bytes, cpu_bytes = (gpu_bytes + output, cpu_bytes) if assignment.output_on_gpu else (
            gpu_bytes, cpu_bytes + output)
        bandwidth = self.gpu_bandwidth
        if self.spills(config):
            bandwidth *= self.shared_slowdown
        elif self.vram_use(config) > self.spill_above * self.vram:
            bandwidth *= self.spill_slowdown
        return 1.0 / (gpu_bytes / bandwidth + cpu_bytes / self.cpu_bandwidth)

    def __call__(self, config: LaunchConfig, limits: Any, cancel: Any) -> Attempt:
        self.calls.append((config.gpu_layers, config.ctx, config.n_cpu_moe))
        ok = self.passes(config)
        attempt = Attempt(config.gpu_layers, config.ctx, ok=ok, peak_vram_bytes=self.vram_reading(config),
                          cause=None if ok else "gpu_out_of_memory", n_cpu_moe=config.n_cpu_moe)
        if ok:
            attempt.generation_tps = round(self.generation_tps(config), 2)
            attempt.prompt_tps = round(attempt.generation_tps * 25, 2)  # prompts are computed in batches
            attempt.generated_tokens = self.generated_tokens
        return attempt
