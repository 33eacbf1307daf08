"""The shared job row (issue 26): its states, the values its signals carry, Cancel, the room for a download's
Pause/Resume, and the four rows built on it fitting the window at 1024×700 mid-job, in English and Chinese."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.core.demo.fetch import DemoProgress
from app.core.engine.rebuild import Phase, RebuildProgress
from app.core.probe import ProbeProgress
from app.core.problem import UserError
from app.core.text import T
from app.ui import i18n, workers
from app.ui.steps.model import model_actions
from app.ui.steps.settings import probe_box as probe_module
from app.ui.widgets.job_row import JobRow, JobState
from tests.ui.clipping import clipped
from tests.ui.conftest import LONG, open_and_wait, wait_for_plan


@pytest.fixture
def row(qtbot) -> JobRow:
    widget = JobRow()
    qtbot.addWidget(widget)
    return widget


def _bar(row: JobRow) -> tuple[int, int, int]:
    return row.progress.minimum(), row.progress.maximum(), row.progress.value()


def test_idle_row_is_hidden_and_a_started_one_shows_a_busy_bar_and_cancel(row):
    assert row.state is JobState.IDLE and row.isHidden() and not row.has_content
    row.start("Getting it…")
    assert row.state is JobState.RUNNING and row.has_content
    assert row.status.text() == "Getting it…" and not row.status.isHidden()
    assert not row.progress.isHidden() and _bar(row)[:2] == (0, 0)  # Qt's busy bar
    assert not row.cancel_button.isHidden() and row.cancel_button.isEnabled()
    assert row.action_button.isHidden()  # no extra action unless one is set


def test_progress_fills_the_bar_and_total_zero_means_busy(row):
    row.start(busy=False)
    assert _bar(row) == (0, 1, 0)  # an empty determinate bar until the first report
    row.set_progress(3, 10, "3 of 10")
    assert _bar(row) == (0, 10, 3) and row.status.text() == "3 of 10"
    row.set_progress(12, 10)  # never past the end; the sentence stays
    assert _bar(row) == (0, 10, 10) and row.status.text() == "3 of 10"
    row.set_progress(0, 0, "size not known")
    assert _bar(row)[:2] == (0, 0)


def test_signals_carry_the_state_enum(qtbot, row):
    seen: list[object] = []
    row.stateChanged.connect(seen.append)
    row.start("a")
    row.say("b")  # a new sentence is no new state
    row.cancelling("c")
    row.finish(JobState.CANCELLED, "d")
    row.reset()
    assert seen == [JobState.RUNNING, JobState.CANCELLING, JobState.CANCELLED, JobState.IDLE]
    assert all(type(state) is JobState for state in seen)


def test_cancel_asks_the_owner_once_and_greys_out_until_the_job_stops(qtbot, row):
    row.show()
    row.start("working")
    asked: list[bool] = []
    row.cancelClicked.connect(lambda: asked.append(True))
    qtbot.mouseClick(row.cancel_button, Qt.MouseButton.LeftButton)
    assert asked == [True] and row.state is JobState.RUNNING  # the owner decides what cancelling means
    row.progress.setRange(0, 10)
    row.cancelling("Cancelling…")
    assert row.state is JobState.CANCELLING and not row.cancel_button.isEnabled() and _bar(row)[:2] == (0, 0)
    row.cancel_button.click()  # disabled: nothing is asked twice
    assert asked == [True]
    row.finish(JobState.CANCELLED, "Cancelled, nothing was kept.")
    assert row.progress.isHidden() and row.cancel_button.isHidden()
    assert row.isVisible() and row.status.text() == "Cancelled, nothing was kept."


def test_an_outcome_without_a_sentence_hides_the_row(row):
    row.show()
    row.start("working")
    row.finish(JobState.DONE)
    assert row.state is JobState.DONE and row.isHidden()
    row.start("again")
    row.finish(JobState.FAILED, "It failed: the disk is full.")
    assert not row.isHidden() and row.status.text() == "It failed: the disk is full."
    row.reset()
    assert row.state is JobState.IDLE and row.isHidden() and row.status.text() == ""


def test_a_job_only_finishes_in_an_ending_state(row):
    row.start("working")
    with pytest.raises(ValueError):
        row.finish(JobState.RUNNING)
    assert row.state is JobState.RUNNING
    row.finish(JobState.DONE, "done")
    row.cancelling("late")  # a cancel after the end changes nothing
    assert row.state is JobState.DONE and row.status.text() == "done"


def test_pause_and_resume_room_for_a_download(qtbot, row):
    row.show()
    actions: list[bool] = []
    row.actionClicked.connect(lambda: actions.append(True))
    row.set_action("Pause")
    assert row.action_button.isHidden()  # shown only while a job is under way
    row.start(busy=False)
    row.set_progress(40, 100, "Downloading: 40 % — 3.1 MB/s, about 2 min left")
    assert not row.action_button.isHidden()
    qtbot.mouseClick(row.action_button, Qt.MouseButton.LeftButton)
    assert actions == [True]
    row.pause("Paused at 40 %.")
    row.set_action("Resume")
    assert row.state is JobState.PAUSED and _bar(row) == (0, 100, 40)  # the bar keeps where it was
    assert row.cancel_button.isEnabled() and not row.progress.isHidden()
    row.resume("Downloading: 40 %")
    assert row.state is JobState.RUNNING
    row.cancelling()
    assert not row.action_button.isEnabled() and not row.cancel_button.isEnabled()


def test_a_label_laid_out_by_the_owner_leaves_only_the_bar_to_the_row(qtbot):
    row = JobRow(label_outside=True)
    qtbot.addWidget(row)
    row.show()
    row.say("Not measured yet.")
    assert row.isHidden() and row.status.text() == "Not measured yet."  # the owner shows its sentence
    row.start("Testing…")
    assert not row.isHidden()
    row.finish(JobState.DONE, "Safe settings, measured.")
    assert row.isHidden()


def test_cancel_follows_the_language(row):
    try:
        assert i18n.apply_language("zh")
        QApplication.processEvents()
        assert row.cancel_button.text() == "取消"
    finally:
        i18n.apply_language("en")
        QApplication.processEvents()
    assert row.cancel_button.text() == "Cancel"


# --- the four rows in the window ----------------------------------------------------------------------------------


def _held_probe(release: threading.Event):
    def probe(info, config, hardware, progress, cancel, max_context=False, **made):  # a worker thread
        sentence = T("Test load 2 of at most 6: 0 GPU layers, 1024 tokens…",
                     "第 2 次测试加载（最多 6 次）：0 个 GPU 层，1024 个词元…")
        progress(ProbeProgress(2, 6, "layers", 0, 1024, sentence, None))
        release.wait(LONG / 1000)
        raise UserError(T("stopped by the test", "测试停止"), None)
    return probe


def _held_demo(release: threading.Event):
    def fetch(progress, cancel, **options):  # a worker thread
        progress(DemoProgress("download", 42 << 20, 100 << 20))
        release.wait(LONG / 1000)
        raise UserError(T("stopped by the test", "测试停止"), None)
    return fetch


def _held_rebuild(release: threading.Event):
    def rebuild(progress, cancel, gpu=None):  # a worker thread
        progress(RebuildProgress(Phase.BUILDING, 42, 100))
        release.wait(LONG / 1000)
        raise UserError(T("stopped by the test", "测试停止"), None)
    return rebuild


def test_the_four_rows_mid_job_fit_the_window_at_1024x700(qtbot, window, tiny_model, monkeypatch):
    window.resize(1024, 700)
    open_and_wait(qtbot, window, tiny_model)
    wait_for_plan(qtbot, window)
    release = threading.Event()
    monkeypatch.setattr(probe_module, "probe_call", _held_probe(release))
    monkeypatch.setattr(model_actions, "get_demo_model", _held_demo(release))
    window.control.rebuild_step = _held_rebuild(release)
    hash_row, demo, probe, rebuild = (window.model.hash_row, window.model.demo_row, window.settings_panel.probe,
                                      window.machine.rebuild_box)
    problems: list[str] = []
    try:
        window.control.engine_rebuild.start("cuda")  # the longest sentence: a graphics-card rebuild at 42 %
        demo.start()
        probe.run()
        hash_row.job.start(busy=False)  # the real hash of the tiny model ends at once: its row as it runs
        qtbot.waitUntil(lambda: rebuild.job.progress.maximum() == 100 and demo.last_progress is not None
                        and probe.status.text().startswith("Test load 2"), timeout=LONG)
        for job in (hash_row.job, demo.job, probe.job, rebuild.job):
            assert job.state is JobState.RUNNING and job.isVisibleTo(window) and job.cancel_button.isVisibleTo(window)
        for lang in ("en", "zh"):
            window.set_language(lang)
            for _ in range(3):
                QApplication.processEvents()
                qtbot.wait(30)
            problems += [f"{lang}: {line}" for line in clipped(window)]
        assert "CUDA" in rebuild.job.status.text() and "42 %" in rebuild.job.status.text()
    finally:
        window.set_language("en")
        release.set()
        hash_row.job.reset()
        qtbot.waitUntil(lambda: workers.active_count() == 0 and not probe.running and not demo.busy, timeout=LONG)
    assert (window.width(), window.height()) == (1024, 700)
    assert not problems, "\n".join(problems)
