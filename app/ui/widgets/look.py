"""The app's few looks, set with fonts and palettes.

No style sheet: an application-wide one made building the window ~3x slower (every widget is then
polished by QStyleSheetStyle), which the start-up benchmark showed. These helpers cost nothing.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QFontDatabase, QPalette
from PySide6.QtWidgets import QWidget

HINT = QColor("#5f6670")
GOOD = QColor("#2e7d32")
BANNER = QColor("#fff4d6")


def _text_colour(widget: QWidget, colour: QColor) -> None:
    palette = widget.palette()
    palette.setColor(QPalette.ColorRole.WindowText, colour)
    palette.setColor(QPalette.ColorRole.Text, colour)
    widget.setPalette(palette)


def hint(widget: QWidget) -> None:
    """Secondary text: explanations, notes."""
    _text_colour(widget, HINT)


def good(widget: QWidget) -> None:
    _text_colour(widget, GOOD)


def bold(widget: QWidget, extra_points: float = 0.0) -> None:
    font = QFont(widget.font())
    font.setBold(True)
    if extra_points:
        font.setPointSizeF(font.pointSizeF() + extra_points)
    widget.setFont(font)


def monospace(widget: QWidget) -> None:
    widget.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))


def card(widget: QWidget, colour: QColor | None = None) -> None:
    """A filled panel (the steps use the base colour, the banner a soft yellow)."""
    palette = widget.palette()
    palette.setColor(QPalette.ColorRole.Window, colour or palette.color(QPalette.ColorRole.Base))
    widget.setPalette(palette)
    widget.setAutoFillBackground(True)
