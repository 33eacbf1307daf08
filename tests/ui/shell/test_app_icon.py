"""The application icon: every PNG size rendered from the SVG is there at its size, the Windows .ico holds the
sizes Windows reads, and the window gets them all."""

from __future__ import annotations

import struct
import xml.etree.ElementTree as ET

from app.ui.shell.app_icon import ICONS_DIR, PNG_SIZES, app_icon

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_each_png_size_is_rendered_at_its_size():
    for size in PNG_SIZES:
        assert png_size((ICONS_DIR / f"gguf-launcher-{size}.png").read_bytes()) == (size, size)
    root = ET.parse(ICONS_DIR / "gguf-launcher.svg").getroot()
    assert root.tag.endswith("svg") and root.get("viewBox") == "0 0 256 256"


def test_the_windows_icon_holds_png_images_16_to_256():
    data = (ICONS_DIR / "gguf-launcher.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    assert (reserved, kind) == (0, 1)
    sizes = []
    for index in range(count):
        width, _height, _colours, _zero, _planes, _bits, length, offset = struct.unpack(
            "<BBBBHHII", data[6 + 16 * index: 22 + 16 * index])
        image = data[offset: offset + length]
        assert png_size(image)[0] == (width or 256)
        sizes.append(width or 256)
    assert sizes == [16, 24, 32, 48, 64, 128, 256]


def test_the_window_icon_offers_every_size(qapp):
    icon = app_icon()
    assert not icon.isNull()
    assert sorted(size.width() for size in icon.availableSizes()) == list(PNG_SIZES)
