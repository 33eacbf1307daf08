"""What the memory watchdog reports, as values: its level, one memory reading, another program's grab of graphics
memory. Apart from the watchdog so that the supervisor's events can carry them without importing it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from app.core.text import T, Text, human_bytes


class Level(StrEnum):
    NORMAL = "normal"
    WARNING = "warning"
    CRITICAL = "critical"


@dataclass(frozen=True)
class MemoryReading:
    used_bytes: int
    limit_bytes: int
    scope: str  # "system" or "cgroup": which limit is the tighter one
    server_rss_bytes: int | None = None

    @property
    def fraction(self) -> float:
        return self.used_bytes / self.limit_bytes if self.limit_bytes > 0 else 0.0

    def to_dict(self, _lang: str | None = None) -> dict:
        return {"used_bytes": self.used_bytes, "limit_bytes": self.limit_bytes, "scope": self.scope,
                "percent": round(100 * self.fraction, 1), "server_rss_bytes": self.server_rss_bytes}


@dataclass(frozen=True)
class VramGrab:
    """Other programs hold ``grown_bytes`` more of a GPU's memory than when the server became ready."""

    gpu: str
    grown_bytes: int
    programs: tuple[str, ...]

    def sentence(self) -> Text:
        names = ", ".join(self.programs) or "?"
        return T("Another program took {size} of graphics memory on {gpu} ({names}) while the server runs. If the "
                 "server needs more, it may stop: close that program, or put fewer layers on the GPU.",
                 "服务器运行期间，另一个程序占用了 {gpu} 上 {size} 的显存（{names}）。如果服务器需要更多显存，它可能会"
                 "停止：请关闭那个程序，或减少放到显卡上的层数。", size=human_bytes(self.grown_bytes), gpu=self.gpu,
                 names=names)
