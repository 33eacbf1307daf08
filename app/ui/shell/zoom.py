"""Ctrl +/- zoom: the app's font scale, in percent steps, kept in the settings (``zoom_percent``)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QWidget

from app.core.settings import ZOOM_MAX, ZOOM_MIN

STEPS = (50, 67, 80, 90, 100, 110, 125, 150, 175, 200, 250, 300)  # like a browser's zoom levels


def next_step(percent: int, direction: int) -> int:
    """The zoom level after ``percent`` going up (+1) or down (-1); stays inside ZOOM_MIN..ZOOM_MAX."""
    if direction > 0:
        bigger = [s for s in STEPS if s > percent]
        return min(bigger[0] if bigger else ZOOM_MAX, ZOOM_MAX)
    smaller = [s for s in STEPS if s < percent]
    return max(smaller[-1] if smaller else ZOOM_MIN, ZOOM_MIN)


_BASE_FONT: list[QFont] = []  # the application font before any zoom, taken once


def _base_font() -> QFont:
    if not _BASE_FONT:
        app = QApplication.instance()
        _BASE_FONT.append(QFont(app.font()) if isinstance(app, QApplication) else QFont())
    return QFont(_BASE_FONT[0])


class Zoom(QObject):
    """Scales the application font; widgets with a font of their own (bold titles) keep their extra size."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        self._base = _base_font()
        self._base_points = self._base.pointSizeF() if self._base.pointSizeF() > 0 else 10.0
        self._own: dict[QWidget, float] = {}  # widget -> its extra points over the app font, found at first zoom
        self.percent = 100

    def apply(self, percent: int) -> None:
        percent = min(max(int(percent), ZOOM_MIN), ZOOM_MAX)
        if percent == self.percent:
            return
        self._remember_own_fonts()
        self.percent = percent
        font = QFont(self._base)
        font.setPointSizeF(self._base_points * percent / 100)
        QApplication.setFont(font)
        for widget, extra in list(self._own.items()):
            try:
                own = QFont(widget.font())
            except RuntimeError:  # deleted since
                del self._own[widget]
                continue
            own.setPointSizeF(max(1.0, (self._base_points + extra) * percent / 100))
            widget.setFont(own)
        for widget in self.window.findChildren(QWidget):  # a style sheet fixes the font it found: read it again
            sheet = widget.styleSheet()
            if sheet:
                widget.setStyleSheet(sheet)
        QApplication.sendEvent(self.window, QEvent(QEvent.Type.LayoutRequest))

    def _remember_own_fonts(self) -> None:
        """Widgets that set their own point size (titles): scaled with the rest."""
        scale = self.percent / 100
        for widget in self.window.findChildren(QWidget):
            if widget in self._own or not widget.testAttribute(Qt.WidgetAttribute.WA_SetFont):
                continue
            points = widget.font().pointSizeF()
            if points > 0:
                self._own[widget] = points / scale - self._base_points
