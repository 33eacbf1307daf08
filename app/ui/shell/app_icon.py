"""The application icon (resources/icons: the SVG and the PNG sizes scripts/render_icons.py makes from it)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtGui import QIcon

ICONS_DIR = Path(__file__).resolve().parents[3] / "resources" / "icons"  # the bundle keeps resources/ beside app/
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
DESKTOP_FILE_NAME = "gguf-launcher"  # packaging/gguf-launcher.desktop: Wayland finds the menu entry's icon by it


def app_icon() -> QIcon:
    icon = QIcon()
    for size in PNG_SIZES:
        path = ICONS_DIR / f"gguf-launcher-{size}.png"
        if path.is_file():
            icon.addFile(str(path), QSize(size, size))
    return icon
