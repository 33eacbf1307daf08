"""The hardware report: what a scan found, as one value that the notes, the plan and the CLI read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.hardware.gpu import GpuInfo
from app.core.text import Text


@dataclass
class HardwareReport:
    os_name: str  # platform.system(): "Linux", "Windows", "Darwin"
    os_release: str  # kernel / build release
    is_wsl: bool
    wsl_gpu_passthrough: bool
    in_container: bool
    cgroup_memory_limit_bytes: int | None  # None: no limit applies
    ram_total_bytes: int
    ram_available_bytes: int
    cpu_model: str
    cpu_cores_physical: int | None
    cpu_cores_logical: int | None
    cpu_flags: list[str]
    gpus: list[GpuInfo]
    other_gpus: list[str]
    notes: list[Text] = field(default_factory=list)
    os_description: str = ""
    wsl_version: int | None = None
    container_kind: str | None = None
    cgroup_memory_usage_bytes: int | None = None
    cgroup_memory_headroom_bytes: int | None = None  # limit minus non-reclaimable usage
    nvidia_note: Text | None = None  # why no NVIDIA GPU was found, when none was

    def usable_ram_bytes(self) -> int:
        """RAM a new process can take: available RAM, capped by what the cgroup limit leaves."""
        if self.cgroup_memory_headroom_bytes is None:
            return self.ram_available_bytes
        return min(self.ram_available_bytes, self.cgroup_memory_headroom_bytes)

    @property
    def effective_ram_total_bytes(self) -> int:
        """Physical RAM, or the cgroup limit where it is smaller (what the OOM killer counts against)."""
        limit = self.cgroup_memory_limit_bytes
        return min(self.ram_total_bytes, limit) if limit else self.ram_total_bytes

    @property
    def has_nvidia_gpu(self) -> bool:
        return bool(self.gpus)

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        """JSON-safe; Text values rendered in ``lang`` (default: the current language)."""
        plain = {
            name: getattr(self, name)
            for name in self.__dataclass_fields__
            if name not in ("gpus", "notes", "nvidia_note")
        }
        return plain | {
            "gpus": [gpu.to_dict() for gpu in self.gpus],
            "notes": [note.render(lang) for note in self.notes],
            "nvidia_note": self.nvidia_note.render(lang) if self.nvidia_note else None,
            "usable_ram_bytes": self.usable_ram_bytes(),
            "effective_ram_total_bytes": self.effective_ram_total_bytes,
        }
