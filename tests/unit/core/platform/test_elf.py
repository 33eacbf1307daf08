from pathlib import Path

from app.core.platform.elf import read_elf


def test_the_xcb_plugin_needs_xcb_cursor_and_finds_qt_beside_it(xcb_plugin):
    info = read_elf(xcb_plugin)
    assert info is not None and info.elf_class in (1, 2)
    assert "libxcb-cursor.so.0" in info.needed and "libQt6XcbQpa.so.6" in info.needed
    assert "$ORIGIN/../../lib" in info.runpath
    qpa = read_elf(xcb_plugin.parents[2] / "lib" / "libQt6XcbQpa.so.6")
    assert qpa is not None and "libxcb-cursor.so.0" in qpa.needed and qpa.loads_beside(info)


def test_not_an_elf_or_cut_short_is_none(tmp_path, xcb_plugin):
    text = tmp_path / "libfake.so.1"
    text.write_text("INPUT(-lfoo)\n")  # a linker script, as some distributions ship under .so names
    cut = tmp_path / "libcut.so.1"
    cut.write_bytes(xcb_plugin.read_bytes()[:40])
    assert read_elf(text) is None and read_elf(cut) is None and read_elf(tmp_path / "absent.so") is None
    assert read_elf(Path("/dev/null")) is None
