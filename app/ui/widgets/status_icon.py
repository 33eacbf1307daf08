"""A round status badge (✓ ok, ! warning, ✕ error, … running) drawn by hand so it is crisp at any DPI."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QWidget

COLORS = {
    "ok": QColor("#2e9d4f"),
    "warning": QColor("#d98c00"),
    "error": QColor("#d03b3b"),
    "running": QColor("#3a78c2"),
    "idle": QColor("#8a8f98"),
}
GLYPHS = {"ok": "✓", "warning": "!", "error": "✕", "running": "…", "idle": "·"}


def _paint(painter: QPainter, rect: QRectF, status: str) -> None:
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(COLORS.get(status, COLORS["idle"]))
    painter.drawEllipse(rect)
    font = QFont(painter.font())
    font.setBold(True)
    font.setPixelSize(max(8, int(rect.height() * 0.68)))
    painter.setFont(font)
    painter.setPen(QColor("white"))
    painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, GLYPHS.get(status, "·"))


def status_icon(status: str, size: int = 16) -> QIcon:
    pixmap = QPixmap(size * 2, size * 2)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    _paint(painter, QRectF(1, 1, size * 2 - 2, size * 2 - 2), status)
    painter.end()
    pixmap.setDevicePixelRatio(2.0)
    return QIcon(pixmap)


class StatusIcon(QWidget):
    def __init__(self, status: str = "idle", size: int = 16, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._status = status
        self.setFixedSize(QSize(size, size))

    @property
    def status(self) -> str:
        return self._status

    def set_status(self, status: str) -> None:
        if status != self._status:
            self._status = status
            self.update()

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        _paint(painter, QRectF(QPointF(0.5, 0.5), self.size().toSizeF() - QSize(1, 1).toSizeF()), self._status)
