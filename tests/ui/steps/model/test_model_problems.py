"""Unhappy paths a newcomer meets in the Model step, through the real window (no server needed)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from PySide6.QtCore import Qt

from app.core.problem import Status
from tests.ui.conftest import LONG, open_and_wait, statuses


def _row_statuses(win) -> list[str]:
    return [icon.status for icon, _label, _button in win.model.checks.rows]


def test_not_a_gguf_is_an_error_row_and_blocks_settings_and_start(qtbot, window, tmp_path):
    path = tmp_path / "notes.gguf"
    path.write_text("hello, this is not a model\n" * 10)
    report = open_and_wait(qtbot, window, path)
    assert statuses(report)["magic"] is Status.ERROR
    assert "error" in _row_statuses(window)
    labels = [label.text() for _icon, label, _button in window.model.checks.rows]
    assert any("not a GGUF" in text for text in labels)
    assert not window.settings_panel.isEnabled()
    assert window.settings_panel.config() is None
    assert not window.server.start_button.isEnabled()  # no model passed its checks: Start says so, not a click
    assert "passes its checks" in window.server.start_button.toolTip()
    window.control.start()  # a start that still arrives (a shortcut) is refused in a sentence
    qtbot.waitUntil(lambda: "passes its checks" in window.statusBar().currentMessage(), timeout=LONG)
    assert window.bridge.supervisor is None


def test_truncated_file_says_so(qtbot, window, tiny_model, tmp_path):
    data = Path(tiny_model).read_bytes()
    path = tmp_path / "half.gguf"
    path.write_bytes(data[: len(data) // 2])
    report = open_and_wait(qtbot, window, path)
    assert statuses(report)["truncation"] is Status.ERROR
    assert report.info is not None or any(c.is_error for c in report.checks)
    assert not window.settings_panel.isEnabled()


def test_non_ascii_path_is_fine_here_and_the_windows_copy_fix_works(qtbot, window, tiny_model, tmp_path):
    from app.core.gguf.path_checks import characters_check

    folder = tmp_path / "模型 文件"
    folder.mkdir()
    path = folder / "tiny.gguf"
    shutil.copyfile(tiny_model, path)
    report = open_and_wait(qtbot, window, path)
    assert statuses(report)["path_chars"] is Status.OK  # Linux/macOS builds open such paths
    assert all(c.status is Status.OK for c in report.checks)
    qtbot.waitUntil(lambda: window.settings_panel.config() is not None, timeout=LONG)
    assert str(path) in window.settings_panel.config().model
    # the same file as Windows sees it: a warning whose fix button copies it to a plain path
    window.model.checks.set_checks([characters_check(path, platform="win32")])
    buttons = [b for _i, _l, b in window.model.checks.rows if b is not None]
    assert len(buttons) == 1 and buttons[0].text() == "Copy to a safe folder"
    qtbot.mouseClick(buttons[0], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.model.path != str(path) and window.model.report is not None
                    and window.model.report.path == window.model.path, timeout=LONG)
    new_path = window.model.path
    assert new_path.isascii() and Path(new_path).read_bytes() == Path(tiny_model).read_bytes()
    assert all(c.status is Status.OK for c in window.model.report.checks), window.model.report.checks
    assert window.store.settings.recent_models[0] == os.path.abspath(new_path)


def test_missing_llama_server_binary_is_a_sentence_not_a_crash(qtbot, window, tiny_model, tmp_path):
    open_and_wait(qtbot, window, tiny_model)
    panel = window.settings_panel
    qtbot.waitUntil(lambda: panel.config() is not None, timeout=LONG)
    panel.advanced_box.set_expanded(True)
    panel.advanced.backend.setCurrentIndex(1)
    panel.advanced.server_bin.setText(str(tmp_path / "no-such-dir" / "llama-server"))
    panel.advanced.server_bin.editingFinished.emit()
    qtbot.waitUntil(lambda: panel.preview is not None and panel.preview.command_error is not None
                    and panel.wait_idle(), timeout=LONG)
    assert panel.command_notes.isVisible() and "llama-server" in panel.command_notes.text()
    qtbot.mouseClick(window.server.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.server.error_label.isVisible() or window.server.crash_card.isVisible()
                    or window.server.state == "failed", timeout=LONG)
    shown = window.server.error_label.text() + window.server.crash_card.problem.message.text()
    assert "llama-server" in shown
    assert window.control.supervisor is None or window.control.supervisor.pid is None

