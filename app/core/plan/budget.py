"""How much memory each device may use: free VRAM per GPU, usable RAM, and the margin to keep free.

A ``vram_budget`` replaces the scanned GPUs with one simulated GPU of that size, so a presenter
can plan for "an 8 GB card" on a laptop without one (a card keeps its margin: the driver needs it).
A ``ram_budget`` is what the server may use: the whole of it, no margin taken out of it. The RAM
margin belongs to the machine's real free memory, not on top of an explicit budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from app.core.hardware.device_order import cuda_order
from app.core.rpc.check import last_checks  # the plan asks the network only through the check's cache
from app.core.rpc.worker import parse_worker

if TYPE_CHECKING:
    from app.core.launch.config import LaunchConfig

MiB = 1024 * 1024


@dataclass(frozen=True)
class Margins:
    """Memory to leave free after a load: max(minimum, fraction of the device's memory)."""

    vram_min_bytes: int = 512 * MiB
    vram_fraction: float = 0.05
    ram_min_bytes: int = 512 * MiB
    ram_fraction: float = 0.05

    def vram_keep(self, total_bytes: int) -> int:
        return max(int(self.vram_min_bytes), int(total_bytes * self.vram_fraction))

    def ram_keep(self, total_bytes: int) -> int:
        return max(int(self.ram_min_bytes), int(total_bytes * self.ram_fraction))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class DeviceBudget:
    kind: str  # "gpu" | "cpu"
    index: int  # GPU index as NVML (the Machine step) numbers it; -1 for the CPU
    name: str
    free_bytes: int
    keep_bytes: int
    simulated: bool = False
    uuid: str | None = None
    address: str | None = None  # an RPC worker (host:port): planned like a GPU, listed before the local GPUs

    @property
    def label(self) -> str:
        if self.address:
            return f"worker {self.address}"
        return "RAM" if self.kind == "cpu" else f"GPU {self.index}"

    @property
    def is_worker(self) -> bool:
        return self.address is not None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _usable_ram(hw: Any) -> int:
    if hw is not None and hasattr(hw, "usable_ram_bytes"):
        return int(hw.usable_ram_bytes())
    import psutil

    return int(psutil.virtual_memory().available)


def gpu_budgets(hw: Any, vram_budget: int | None, margins: Margins) -> list[DeviceBudget]:
    if vram_budget is not None:
        keep = margins.vram_keep(int(vram_budget))
        return [DeviceBudget("gpu", 0, "simulated GPU", int(vram_budget), keep, simulated=True)]
    budgets = []
    for gpu in cuda_order(getattr(hw, "gpus", None) or ()):  # position n = CUDA device n of a launch
        total = int(gpu.vram_total_bytes or gpu.vram_free_bytes or 0)
        budgets.append(DeviceBudget("gpu", int(gpu.index), str(gpu.name), int(gpu.vram_free_bytes or 0),
                                    margins.vram_keep(total), uuid=getattr(gpu, "uuid", None)))
    return budgets


def ram_budget_of(hw: Any, ram_budget: int | None, margins: Margins) -> DeviceBudget:
    if ram_budget is not None:  # the server may use all of it
        return DeviceBudget("cpu", -1, "RAM budget", int(ram_budget), 0, simulated=True)
    free = _usable_ram(hw)
    return DeviceBudget("cpu", -1, "system RAM", free, margins.ram_keep(free))


def gpu_shares(config: LaunchConfig, gpus: Sequence[DeviceBudget]) -> list[float]:
    """Each GPU's share of the offloaded layers as llama.cpp reads it: with split mode "none" the main GPU only
    ([] when it is not there); an explicit tensor split when any of its numbers for the GPUs present is above 0
    (missing numbers count 0, extra ones are ignored); else each GPU's free memory, llama.cpp's default.
    Split mode "row" is planned like "layer": it cuts every matrix by the same shares, so each card holds about
    the same bytes, while a layer's cache and small tensors stay on the card its layer was given."""
    count = len(gpus)
    if config.split_mode == "none":
        if config.main_gpu >= count:
            return []
        return [1.0 if i == config.main_gpu else 0.0 for i in range(count)]
    explicit = [float(v) for v in (tuple(config.tensor_split) + (0.0,) * count)[:count]]
    if any(v > 0 for v in explicit):
        return explicit
    return [float(max(g.free_bytes, 1)) for g in gpus]


def worker_budgets(addresses: Sequence[str], margins: Margins) -> list[DeviceBudget]:
    """One budget per RPC worker with the memory it reported at its last check (app.core.rpc.check; a worker
    that does not answer has none). llama.cpp puts RPC devices before the local GPUs (llama.cpp
    ``llama_model_load_from_file_impl``: "add RPC servers at the front of the list"), so they come first here,
    and the first numbers of a tensor split are theirs."""
    budgets = []
    for position, check in enumerate(last_checks([parse_worker(a) for a in addresses])):
        budgets.append(DeviceBudget("gpu", position, "llama.cpp worker", check.free_bytes if check.usable else 0,
                                    margins.vram_keep(check.total_bytes), address=check.worker.address))
    return budgets


def device_budgets(hw: Any, *, vram_budget: int | None = None, ram_budget: int | None = None,
                   margins: Margins | None = None, workers: Sequence[str] = ()) -> list[DeviceBudget]:
    """RPC workers first, then GPU budgets (in CUDA order, as a launch numbers them), then the RAM budget last."""
    margins = margins or Margins()
    return (worker_budgets(workers, margins) + gpu_budgets(hw, vram_budget, margins)
            + [ram_budget_of(hw, ram_budget, margins)])
