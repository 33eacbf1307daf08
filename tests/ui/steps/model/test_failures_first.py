"""The Model step leads with bad news: a damaged file's check list starts with its failures (the plain one first)
under a summary that says what failed, and Start stays disabled; a download that stopped early is one of them."""

from __future__ import annotations

import pytest

from app.core.gguf.zero_check import CHECK_ID
from tests.ui.conftest import open_and_wait
from tests.unit.core.gguf.test_check_order import layer_lacking_a_part


def _visible_rows(win) -> list[tuple[str, str]]:
    return [(icon.status, label.text()) for icon, label, _button in win.model.checks.rows if label.isVisible()]


def _start_is_refused(win) -> bool:
    button = win.server.start_button
    return not button.isEnabled() and "passes its checks" in button.toolTip()


def test_a_damaged_file_leads_with_its_failures(qtbot, window, tmp_path):
    open_and_wait(qtbot, window, layer_lacking_a_part(tmp_path))
    checks = window.model.checks
    assert checks.summary.isVisible() and checks.summary_icon.status == "error"
    assert "checks failed (the model's parts, the data layout)" in checks.summary.text()
    assert "passed." in checks.summary.text() and not checks.summary.text().startswith("All")
    rows = _visible_rows(window)
    assert [status for status, _ in rows] == ["error", "error"]  # the passed rows are folded away
    assert rows[0][1].startswith("This file is damaged: layer 1 lacks a part every other layer has")
    assert rows[1][1].startswith("This file is damaged: its parts are not stored one right after another")
    assert _start_is_refused(window)


@pytest.fixture(scope="module")
def stopped_download(tmp_path_factory):
    """The generated deepseek2 (F16, 7.7 MiB) with its last 30 % zeroed, as a pre-allocating downloader leaves it."""
    from app.core.synthetic import write_model

    folder = tmp_path_factory.mktemp("stopped")
    data = bytearray(write_model("deepseek2", folder / "source.gguf").read_bytes())
    cut = int(len(data) * 0.7)
    data[cut:] = bytes(len(data) - cut)
    path = folder / "deepseek2.F16.gguf"
    path.write_bytes(bytes(data))
    return path


def test_a_download_that_stopped_early_fails_and_start_is_refused(qtbot, window, stopped_download):
    report = open_and_wait(qtbot, window, stopped_download)
    assert [c.id for c in report.checks if c.is_error] == [CHECK_ID]
    assert window.model.checks.summary.text().startswith("1 of ")
    assert "(the data itself)" in window.model.checks.summary.text()
    status, text = _visible_rows(window)[0]
    assert status == "error" and text.startswith("The last 2.3 MiB of this file are zeros: the download stopped "
                                                 "before the end.")
    assert "Download the file again" in text
    assert not window.settings_panel.isEnabled()
    assert _start_is_refused(window)
