"""The Machine step's graphics cards: one row per GPU (name, a VRAM bar with free of total, driver, who else
holds memory on it), or the sentence saying why there is none.

Rows are numbered as NVML numbers the cards, which is the order the app's servers see them in too (it pins
CUDA's order to the PCI bus), so "GPU 1" here is GPU 1 in the plan's layer split. The sentences belong to the
Machine step and keep its translation context.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from app.core.text import human_bytes
from app.ui.widgets import look
from app.ui.widgets.memory_bar import MemoryBar, Segment

if TYPE_CHECKING:
    from app.core.hardware.gpu import GpuInfo, GpuProcess
    from app.core.hardware.report import HardwareReport

class GpuCards(QWidget):
    """``show_gpus(gpus, report, own_pids)`` renders each card; ``rows`` holds (name, bar, detail) per card."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.rows: list[tuple[QLabel, MemoryBar, QLabel]] = []
        self.own_pids: set[int] = set()

    def show_gpus(self, gpus: list[GpuInfo], report: HardwareReport | None, own_pids: set[int]) -> None:
        self.own_pids = set(own_pids)
        self._ensure_rows(len(gpus))
        for i, (name, bar, detail) in enumerate(self.rows):
            visible = i < len(gpus)
            bar.setVisible(visible)
            name.setVisible(visible or i == 0)
            detail.setVisible(visible)
            if visible:
                self._render_gpu(gpus[i], name, bar, detail)
        if not gpus:
            self.rows[0][0].setText(self._no_gpu_text(report))

    def _ensure_rows(self, count: int) -> None:
        while len(self.rows) < max(count, 1):
            row = len(self.rows)
            name, detail = (QLabel(self, textFormat=Qt.TextFormat.PlainText) for _ in range(2))
            bar = MemoryBar(self)
            detail.setWordWrap(True)
            look.hint(detail)
            name.setWordWrap(True)
            for i, widget in enumerate((name, bar, detail)):
                self.grid.addWidget(widget, row * 3 + i, 0)
            self.rows.append((name, bar, detail))

    def _no_gpu_text(self, report: HardwareReport | None) -> str:
        others = ", ".join(report.other_gpus or []) if report is not None else ""
        why = report.nvidia_note if report is not None else None  # e.g. "no NVIDIA driver is installed"
        text = why.render() if why is not None else QCoreApplication.translate(
            "MachinePanel", "No NVIDIA GPU found. That is fine: models run on the processor, only slower.")
        if others:
            text += " " + QCoreApplication.translate(
                "MachinePanel", "(Also seen: {others}; not used for acceleration.)").format(others=others)
        return text

    def _render_gpu(self, gpu: GpuInfo, name: QLabel, bar: MemoryBar, detail: QLabel) -> None:
        total = gpu.vram_total_bytes or 0
        used = gpu.vram_used_bytes or 0
        free = gpu.vram_free_bytes if gpu.vram_free_bytes is not None else max(0, total - used)
        name.setText(QCoreApplication.translate("MachinePanel", "GPU {index}: {name}").format(
            index=gpu.index, name=gpu.name))
        bar.set_usage([Segment(QCoreApplication.translate("MachinePanel", "in use"), used, other=True)], total,
                      QCoreApplication.translate("MachinePanel", "{free} free of {total}").format(
                          free=human_bytes(free), total=human_bytes(total)))
        parts = [QCoreApplication.translate("MachinePanel", "driver {driver}, CUDA {cuda}").format(
            driver=gpu.driver_version or "?", cuda=gpu.cuda_driver_version or "?")]
        holders = [self._process_text(p) for p in gpu.other_processes or []]
        if holders:
            parts.append(QCoreApplication.translate("MachinePanel", "held by: {list}").format(list=", ".join(holders)))
        detail.setText(" · ".join(parts))

    def _process_text(self, process: GpuProcess) -> str:
        label = (QCoreApplication.translate("MachinePanel", "this app's server") if process.pid in self.own_pids
                 else process.name)
        size = human_bytes(process.used_bytes) if process.used_bytes is not None else "?"
        return f"{label} ({size})"
