"""Render resources/icons/gguf-launcher.svg to the PNG sizes and the Windows .ico that the app, the Linux menu
entry and the bundle use. Run after changing the SVG, then commit the results:

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/render_icons.py
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ICONS = Path(__file__).resolve().parents[1] / "resources" / "icons"
SVG = ICONS / "gguf-launcher.svg"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)  # Windows reads 256 and below; each entry is a PNG (Vista and later)


def png_name(size: int) -> str:
    return f"gguf-launcher-{size}.png"


def render(renderer: QSvgRenderer, size: int) -> bytes:
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data)


def ico(pngs: dict[int, bytes]) -> bytes:
    """An ICO file whose images are PNGs: ICONDIR, one ICONDIRENTRY per size, then the data."""
    header = struct.pack("<HHH", 0, 1, len(pngs))
    offset = len(header) + 16 * len(pngs)
    entries, blobs = b"", b""
    for size, data in sorted(pngs.items()):
        entries += struct.pack("<BBBBHHII", size % 256, size % 256, 0, 0, 1, 32, len(data), offset + len(blobs))
        blobs += data
    return header + entries + blobs


def main() -> int:
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841 - painting needs one
    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        print(f"{SVG} is not a valid SVG", file=sys.stderr)
        return 1
    pngs = {size: render(renderer, size) for size in PNG_SIZES}
    for size, data in pngs.items():
        (ICONS / png_name(size)).write_bytes(data)
    (ICONS / "gguf-launcher.ico").write_bytes(ico({size: pngs[size] for size in ICO_SIZES}))
    print(f"Wrote {len(pngs)} PNG sizes and gguf-launcher.ico to {ICONS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
