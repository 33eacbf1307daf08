"""Library folders built from the real xcb platform plugin's dependency tree, for the check to search."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.platform import qt_libs
from app.core.platform.loader import resolve_tree


@pytest.fixture(scope="session")
def xcb_plugin() -> Path:
    folder = qt_libs.platforms_dir({})
    assert folder is not None, "PySide6 is not installed in this environment"
    plugin = qt_libs.plugin_file(folder, "xcb")
    assert plugin is not None, f"PySide6 ships no xcb platform plugin in {folder}"
    return plugin


@pytest.fixture
def complete_libs(tmp_path, xcb_plugin) -> Path:
    """A folder with every library the plugin needs, as symlinks to this machine's own. A library this machine
    lacks stands in as a link to its libc (a real library of the right kind whose own needs are in the folder),
    so the folder is complete here as on a full desktop; Qt's own libraries come from the plugin's run path."""
    tree = resolve_tree(xcb_plugin)
    libc = tree["libc.so.6"]
    assert libc is not None
    folder = tmp_path / "libs"
    folder.mkdir()
    for name, path in tree.items():
        (folder / name).symlink_to(path or libc)
    return folder


@pytest.fixture
def libs_without_cursor(complete_libs) -> Path:
    (complete_libs / "libxcb-cursor.so.0").unlink()
    return complete_libs
