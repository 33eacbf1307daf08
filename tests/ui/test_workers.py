"""Background calls: results, progress and errors come back on the GUI thread; cancel reaches the worker."""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import QObject

from app.ui import workers


def _count(n, progress, cancel):
    for i in range(n):
        if cancel():
            return ("cancelled", i)
        progress(i + 1, n)
        time.sleep(0.005)
    return ("done", n)


def test_result_and_progress_arrive_on_the_gui_thread(qtbot):
    main = threading.get_ident()
    seen = {"progress": [], "threads": set(), "result": None}

    def on_progress(value):
        seen["progress"].append(value)
        seen["threads"].add(threading.get_ident())

    def on_done(result):
        seen["result"] = result
        seen["threads"].add(threading.get_ident())

    workers.run_task(_count, 20, on_done=on_done, on_progress=on_progress, wants_progress=True, wants_cancel=True)
    qtbot.waitUntil(lambda: task_done(seen), timeout=10_000)
    assert seen["result"] == ("done", 20)
    assert seen["progress"][-1] == (20, 20)
    assert seen["threads"] == {main}


def task_done(seen) -> bool:
    return seen["result"] is not None


def test_cancel_reaches_the_worker(qtbot):
    results = []
    task = workers.run_task(_count, 10_000, on_done=results.append, wants_progress=True, wants_cancel=True)
    qtbot.waitUntil(lambda: workers.active_count() >= 1, timeout=5_000)
    time.sleep(0.05)
    task.cancel()
    qtbot.waitUntil(lambda: bool(results), timeout=10_000)
    kind, reached = results[0]
    assert kind == "cancelled" and reached < 10_000


def test_errors_are_values_not_crashes(qtbot):
    errors = []

    def boom():
        raise ValueError("nope")

    workers.run_task(boom, on_error=errors.append)
    qtbot.waitUntil(lambda: bool(errors), timeout=5_000)
    assert isinstance(errors[0], ValueError)


def test_callbacks_of_a_deleted_widget_are_skipped(qtbot):
    calls: list[str] = []

    class Receiver(QObject):
        def __init__(self, name):
            super().__init__()
            self.name = name

        def on_done(self, _result):
            calls.append(self.name)

    deleted, alive = Receiver("deleted"), Receiver("alive")
    gate = threading.Event()
    workers.run_task(gate.wait, 5, on_done=deleted.on_done)
    workers.run_task(gate.wait, 5, on_done=alive.on_done)
    import shiboken6

    shiboken6.delete(deleted)
    gate.set()
    qtbot.waitUntil(lambda: workers.active_count() == 0, timeout=10_000)  # no RuntimeError in the event loop
    assert calls == ["alive"]  # both tasks reported back; only the living receiver was called


def test_debouncer_runs_once_after_the_last_trigger(qtbot):
    calls = []
    debouncer = workers.Debouncer(lambda: calls.append(time.monotonic()), 60)
    for _ in range(5):
        debouncer.trigger()
        qtbot.wait(10)
    qtbot.waitUntil(lambda: bool(calls), timeout=2_000)
    qtbot.wait(120)
    assert len(calls) == 1


def test_owner_deleted_skips_lambda_callbacks(qtbot):
    import shiboken6

    owner = QObject()
    calls = []
    gate = threading.Event()
    workers.run_task(gate.wait, 5, on_done=lambda _r: calls.append(owner.objectName()), owner=owner)
    shiboken6.delete(owner)
    gate.set()
    qtbot.waitUntil(lambda: workers.active_count() == 0, timeout=10_000)
    assert calls == []
