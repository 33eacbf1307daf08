"""One memory bar per device of a ``MemoryPlan``: weights, context (KV), compute and overhead against free memory."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from app.core.text import human_bytes
from app.ui.widgets.memory_bar import MemoryBar, Segment

if TYPE_CHECKING:  # the types only: the planner loads with the first plan, not with the window
    from app.core.plan.estimate import DevicePlan
    from app.core.plan.memory import MemoryPlan

AMBER_FRACTION = 0.80


def tr(text: str) -> str:
    return QCoreApplication.translate("", text)  # lupdate files module-level tr() under the empty context


def device_zone(device: DevicePlan) -> str:
    """Red: does not fit with the safety margin; amber: fits but uses most of it; green: room to spare."""
    if not device.fits:
        return "red"
    free = max(device.budget.free_bytes, 1)
    return "amber" if device.total_bytes > AMBER_FRACTION * free else "green"


def device_segments(device: DevicePlan) -> list[Segment]:
    return [
        Segment(tr("model weights"), device.weights_bytes),
        Segment(tr("context (KV cache)"), device.kv_bytes),
        Segment(tr("compute buffers"), device.compute_bytes),
        Segment(tr("overhead"), device.overhead_bytes),
    ]


def device_caption(device: DevicePlan) -> str:
    return tr("needs {need} of {free} free").format(
        need=human_bytes(device.total_bytes), free=human_bytes(device.budget.free_bytes))


def device_title(device: DevicePlan) -> str:
    if device.budget.kind == "cpu":
        return tr("RAM")
    return tr("VRAM, GPU {index}").format(index=device.budget.index)


class PlanBars(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setColumnStretch(1, 1)
        self.rows: list[tuple[QLabel, MemoryBar]] = []
        self.plan: MemoryPlan | None = None

    def set_plan(self, plan: MemoryPlan | None) -> None:
        self.plan = plan
        devices = list(plan.devices) if plan is not None else []
        while len(self.rows) < len(devices):
            label, bar = QLabel(self, textFormat=Qt.TextFormat.PlainText), MemoryBar(self)
            self._grid.addWidget(label, len(self.rows), 0)
            self._grid.addWidget(bar, len(self.rows), 1)
            self.rows.append((label, bar))
        for i, (label, bar) in enumerate(self.rows):
            visible = i < len(devices)
            label.setVisible(visible)
            bar.setVisible(visible)
            if visible:
                device = devices[i]
                label.setText(device_title(device))
                bar.set_usage(device_segments(device), device.budget.free_bytes, device_caption(device),
                              zone=device_zone(device))
                bar.setToolTip(device.summary().render() + "\n\n" + bar.toolTip())

    def zones(self) -> list[str]:
        return [bar.zone for label, bar in self.rows if bar.isVisibleTo(self)]

    def retranslate(self) -> None:
        self.set_plan(self.plan)
