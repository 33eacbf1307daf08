"""A horizontal memory bar: stacked segments against a capacity, coloured by how full it is.

Zones: green below 80 %, amber up to 95 %, red above (or when it does not fit at all). Segments
marked ``other`` (memory held by other programs) are grey so the user sees what is not theirs.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from app.core.text import human_bytes

ZONE_COLORS = {"green": QColor("#2e9d4f"), "amber": QColor("#d98c00"), "red": QColor("#d03b3b")}  # borders
# dark text stays readable
ZONE_FILLS = {"green": QColor("#8fd3a8"), "amber": QColor("#f3cd7e"), "red": QColor("#f0a0a0")}
OTHER_COLOR = QColor("#c5cad1")
TRACK_COLOR = QColor("#eef0f2")
TEXT_COLOR = QColor("#1d2127")


def zone_for(fraction: float) -> str:
    if fraction < 0.80:
        return "green"
    if fraction <= 0.95:
        return "amber"
    return "red"


@dataclass(frozen=True)
class Segment:
    label: str
    n_bytes: int
    other: bool = False  # held by something that is not this app


class MemoryBar(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._segments: list[Segment] = []
        self._capacity = 0
        self._caption = ""
        self._zone: str | None = None
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMinimumWidth(120)

    def sizeHint(self) -> QSize:
        return QSize(240, max(20, self.fontMetrics().height() + 8))

    def minimumSizeHint(self) -> QSize:
        return QSize(120, self.sizeHint().height())

    def set_usage(self, segments: list[Segment], capacity: int, caption: str = "", zone: str | None = None) -> None:
        """``zone`` overrides the colour picked from the fill level (the plan knows about safety margins)."""
        self._zone = zone
        self._segments = [s for s in segments if s.n_bytes > 0]
        self._capacity = max(0, int(capacity))
        self._caption = caption
        lines = [f"{s.label}: {human_bytes(s.n_bytes)}" for s in self._segments]
        lines.append(f"= {human_bytes(self.used)} / {human_bytes(self._capacity)}")
        self.setToolTip("\n".join(lines))
        self.setAccessibleName(self.text())
        self.setAccessibleDescription(", ".join(lines))
        self.update()

    @property
    def used(self) -> int:
        return sum(s.n_bytes for s in self._segments)

    @property
    def fraction(self) -> float:
        return self.used / self._capacity if self._capacity else (1.0 if self.used else 0.0)

    @property
    def zone(self) -> str:
        return self._zone or zone_for(self.fraction)

    def text(self) -> str:
        if self._caption:
            return self._caption
        return f"{human_bytes(self.used)} / {human_bytes(self._capacity)}"

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(TRACK_COLOR)
        painter.drawRoundedRect(rect, 4, 4)
        zone_color, fill = ZONE_COLORS[self.zone], ZONE_FILLS[self.zone]
        scale = rect.width() / max(self._capacity, self.used, 1)
        x = rect.left()
        mine = 0
        for seg in self._segments:
            width = seg.n_bytes * scale
            painter.setBrush(OTHER_COLOR if seg.other else QColor(fill).darker(100 + 12 * mine))
            mine += 0 if seg.other else 1
            painter.drawRect(QRectF(x, rect.top(), width, rect.height()))
            x += width
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(QPen(zone_color if self.used else TRACK_COLOR.darker(130), 1))
        painter.drawRoundedRect(rect, 4, 4)
        painter.setPen(TEXT_COLOR)
        painter.drawText(rect.adjusted(6, 0, -6, 0), Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                         self.text())
