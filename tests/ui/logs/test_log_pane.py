"""Log pane: bounded memory, filter, highlighting, pause, save, and the bridge's batching path."""

from __future__ import annotations

import threading

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication

from app.core.process.child_log import LogLine
from app.core.server.events import Event, LogEvent, State, StateChanged
from app.ui.logs.log_pane import LEVEL_ERROR, LEVEL_WARNING, LogPane
from app.ui.steps.server.supervisor_bridge import SupervisorBridge


def make_pane(qtbot, **kwargs) -> LogPane:
    pane = LogPane(**kwargs)
    qtbot.addWidget(pane)
    return pane


def shown_lines(pane: LogPane) -> list[str]:
    return pane.shown_lines()


def test_line_count_stays_bounded_and_keeps_the_newest_lines(qtbot):
    pane = make_pane(qtbot, max_lines=200)
    for start in range(0, 1_000, 50):
        pane.append_lines(f"line {i}" for i in range(start, start + 50))
    assert pane.shown_line_count() == 200
    assert shown_lines(pane)[-1] == "line 999"
    assert shown_lines(pane)[0] == "line 800"
    assert len(pane._history) == 200  # memory bounded too, not only the view


def test_a_batch_longer_than_the_pane_keeps_its_newest_lines(qtbot):
    pane = make_pane(qtbot, max_lines=100)
    pane.append_lines([LogLine(0.0, "stderr", f"batch {i}") for i in range(350)])
    assert shown_lines(pane) == [f"batch {i}" for i in range(250, 350)]


def test_the_view_follows_new_lines_from_the_bottom(qtbot):
    pane = make_pane(qtbot, max_lines=1_000)
    pane.resize(600, 200)
    pane.show()
    pane.append_lines(f"follow {i}" for i in range(500))
    qtbot.wait(10)
    bar = pane.view.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()


def test_a_view_following_the_newest_line_keeps_it_in_view_when_it_gets_shorter(qtbot):
    pane = make_pane(qtbot, max_lines=1_000)
    pane.resize(600, 400)
    pane.show()
    pane.append_lines(f"tail {i}" for i in range(500))
    qtbot.wait(10)
    pane.resize(600, 150)  # e.g. the crash card appears above the Logs tab
    qtbot.wait(10)
    bar = pane.view.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()


def test_filter_shows_matching_lines_and_new_matches_only(qtbot):
    pane = make_pane(qtbot)
    pane.append_lines(["load_tensors: CPU model buffer", "slot 0: prompt done", "load_tensors: offloaded 0/2"])
    pane.set_filter("LOAD_TENSORS")
    assert shown_lines(pane) == ["load_tensors: CPU model buffer", "load_tensors: offloaded 0/2"]
    pane.append_lines(["unrelated", "load_tensors: done"])
    assert shown_lines(pane)[-1] == "load_tensors: done"
    assert "unrelated" not in shown_lines(pane)
    pane.set_filter("")
    assert len(shown_lines(pane)) == 5


def test_level_filter_keeps_errors_and_warnings(qtbot):
    pane = make_pane(qtbot)
    pane.append_lines(["ok line", "warning: flash attention not supported", "error loading model: bad magic"])
    pane.set_min_level(LEVEL_WARNING)
    assert shown_lines(pane) == ["warning: flash attention not supported", "error loading model: bad magic"]
    pane.set_min_level(LEVEL_ERROR)
    assert shown_lines(pane) == ["error loading model: bad magic"]


def test_errors_and_warnings_are_coloured(qtbot):
    pane = make_pane(qtbot)
    pane.append_lines([
        "llama_model_load: error loading model: tensor data is not within the file bounds",
        "warning: not using mmap",
        "srv  load_model: loaded",
    ])
    assert [pane.level_colour(row) for row in range(3)] == ["#c62828", "#b26a00", ""]


def test_pause_freezes_the_view_and_resume_catches_up(qtbot):
    pane = make_pane(qtbot)
    pane.append_lines(["before pause"])
    pane.set_paused(True)
    pane.append_lines([f"while paused {i}" for i in range(3)])
    qtbot.wait(20)
    assert shown_lines(pane) == ["before pause"]
    assert "3" in pane.status_label.text() and not pane.status_label.isHidden()
    pane.set_paused(False)
    assert shown_lines(pane) == ["before pause"] + [f"while paused {i}" for i in range(3)]
    assert pane.status_label.isHidden()


def test_copy_without_selection_copies_the_shown_lines(qtbot):
    pane = make_pane(qtbot)
    pane.append_lines(["alpha", "beta", "gamma"])
    pane.copy_to_clipboard()
    assert QGuiApplication.clipboard().text() == "alpha\nbeta\ngamma"


def test_copy_with_a_selection_copies_the_selected_lines(qtbot):
    pane = make_pane(qtbot)
    pane.append_lines(["alpha", "beta", "gamma"])
    pane.view.select_rows(2, 1)
    pane.copy_to_clipboard()
    assert QGuiApplication.clipboard().text() == "beta\ngamma"


def test_mouse_drag_selects_lines_and_the_selection_survives_old_lines_leaving(qtbot):
    pane = make_pane(qtbot, max_lines=50)
    pane.resize(600, 400)
    pane.show()
    pane.append_lines(f"row {i}" for i in range(50))
    pane.view.verticalScrollBar().setValue(0)
    height = pane.view.fontMetrics().height()
    viewport = pane.view.viewport()
    qtbot.mousePress(viewport, Qt.LeftButton, pos=QPoint(10, height * 1 + 2))
    qtbot.mouseMove(viewport, QPoint(10, height * 3 + 2))
    qtbot.mouseRelease(viewport, Qt.LeftButton, pos=QPoint(10, height * 3 + 2))
    assert pane.view.selected_text() == "row 1\nrow 2\nrow 3"
    pane.append_lines(["row 50", "row 51"])  # rows 0 and 1 leave the pane
    assert pane.view.selected_text() == "row 2\nrow 3"
    assert pane.view.verticalScrollBar().value() == 0  # not following: the reader's place is kept


def test_save_writes_the_shown_lines_off_the_gui_thread(qtbot, tmp_path):
    pane = make_pane(qtbot)
    pane.append_lines(["first", "second"])
    target = tmp_path / "saved.log"
    with qtbot.waitSignal(pane.saved, timeout=3_000) as blocker:
        pane.save_to(target)
    assert blocker.args == [str(target)]
    assert target.read_text(encoding="utf-8") == "first\nsecond\n"


def test_save_to_an_impossible_path_says_why(qtbot, tmp_path):
    pane = make_pane(qtbot)
    pane.append_lines(["x"])
    with qtbot.waitSignal(pane.saveFailed, timeout=3_000):
        pane.save_to(tmp_path / "missing-dir" / "log.txt")
    assert "Could not save" in pane.status_label.text()


def test_retranslate_keeps_the_widgets_usable(qtbot):
    pane = make_pane(qtbot)
    pane.retranslate()
    assert pane.pause_button.text() == "Pause"
    assert pane.level_combo.count() == 3


class _FakeSupervisorEvents:
    """Only the subscribe() half of a Supervisor: lets a thread push events through the real bridge."""

    def __init__(self):
        self.callbacks = []

    def subscribe(self, callback):
        self.callbacks.append(callback)
        return lambda: self.callbacks.remove(callback)



def test_bridge_batches_a_flood_from_another_thread(qtbot):
    events = _FakeSupervisorEvents()
    bridge = SupervisorBridge(events, max_pending=50_000)
    pane = make_pane(qtbot, max_lines=1_000)
    batches = []
    bridge.logLines.connect(lambda lines: batches.append(len(lines)))
    bridge.logLines.connect(pane.append_lines)

    def flood():
        for i in range(20_000):
            events.callbacks[0](Event(0.0, State.READY, LogEvent(LogLine(0.0, "stderr", f"flood {i}"))))

    worker = threading.Thread(target=flood)
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: sum(batches) == 20_000, timeout=5_000)
    assert len(batches) < 200  # batched, not one signal per line
    assert shown_lines(pane)[-1] == "flood 19999"
    assert pane.shown_line_count() == 1_000
    bridge.close()
    assert events.callbacks == []


def test_bridge_reports_skipped_lines_when_its_buffer_overflows(qtbot):
    events = _FakeSupervisorEvents()
    bridge = SupervisorBridge(events, max_pending=100)
    with qtbot.waitSignal(bridge.logLines, timeout=2_000) as blocker:
        for i in range(150):
            events.callbacks[0](Event(0.0, State.READY, LogEvent(LogLine(0.0, "stdout", f"l{i}"))))
    lines = blocker.args[0]
    assert "50" in lines[0] and "skipped" in lines[0]
    assert lines[-1].text == "l149" and len(lines) == 101


def test_bridge_drops_state_events_queued_by_a_replaced_supervisor(qtbot):
    old, new = _FakeSupervisorEvents(), _FakeSupervisorEvents()
    bridge = SupervisorBridge(old)
    states = []
    bridge.stateChanged.connect(lambda state, data: states.append(state))
    old.callbacks[0](Event(0.0, State.STOPPED, StateChanged(State.STOPPED, 0)))  # queued, not yet delivered
    bridge.set_supervisor(new)
    new.callbacks[0](Event(0.0, State.STARTING, StateChanged(State.STARTING, 0)))
    qtbot.waitUntil(lambda: states == ["starting"], timeout=2_000)
    qtbot.wait(20)
    assert states == ["starting"] and old.callbacks == []


class _FailingStart(_FakeSupervisorEvents):
    def start(self):
        import threading as _threading

        self.thread = _threading.current_thread()
        raise RuntimeError("no binary")


def test_bridge_actions_run_off_the_gui_thread_and_report_failures(qtbot):
    supervisor = _FailingStart()
    bridge = SupervisorBridge(supervisor)
    with qtbot.waitSignal(bridge.actionFailed, timeout=5_000) as failed:
        bridge.start()
        assert bridge.is_busy()
    assert failed.args[0] == "start" and str(failed.args[1]) == "no binary"
    assert supervisor.thread is not threading.main_thread()
    assert not bridge.is_busy()
