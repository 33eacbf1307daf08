"""Run core calls off the GUI thread and get their outcome back on it.

``run_task(fn, ..., on_done=..., on_error=..., on_progress=...)`` runs ``fn`` on a thread pool.
When ``wants_progress``/``wants_cancel`` are set, ``fn`` receives ``progress=`` (call it with any
value from the worker thread) and ``cancel=`` (a zero-argument callable returning True once the
user cancelled). Callbacks always run on the GUI thread, because the :class:`Task` is a QObject
created there and its private signals are delivered by queued connection.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeGuard

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal, Slot

_pool: QThreadPool | None = None
_live: set[Task] = set()  # keeps Python wrappers alive until their callbacks ran


def pool() -> QThreadPool:
    global _pool
    if _pool is None:
        _pool = QThreadPool()
        _pool.setMaxThreadCount(4)
    return _pool


class _Runnable(QRunnable):
    def __init__(self, task: Task) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._task = task

    def run(self) -> None:  # worker thread
        self._task._execute()


class Task(QObject):
    """One background call. ``cancel()`` asks it to stop; ``done`` is True once callbacks ran."""

    _progress = Signal(object)
    _finished = Signal(object, object)  # (result, exception)

    def __init__(self, fn: Callable[..., Any], args: tuple, kwargs: dict, *,
                 wants_progress: bool, wants_cancel: bool) -> None:
        super().__init__()
        self._fn, self._args, self._kwargs = fn, args, kwargs
        self._cancel_event = threading.Event()
        if wants_progress:
            self._kwargs["progress"] = self._report_progress
        if wants_cancel:
            self._kwargs["cancel"] = self._cancel_event.is_set
        self.owner: QObject | None = None  # callbacks are skipped once this widget is deleted
        self.on_done: Callable[[Any], object] | None = None  # callbacks: what they return is not used
        self.on_error: Callable[[BaseException], object] | None = None
        self.on_progress: Callable[[Any], object] | None = None
        self.done = False
        self._progress.connect(self._deliver_progress)
        self._finished.connect(self._deliver_finished)

    def cancel(self) -> None:
        self._cancel_event.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel_event.is_set()

    def _report_progress(self, *values: Any) -> None:  # worker thread
        self._progress.emit(values[0] if len(values) == 1 else values)

    def _execute(self) -> None:  # worker thread
        try:
            result = self._fn(*self._args, **self._kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed to the GUI as a value
            self._finished.emit(None, exc)
        else:
            self._finished.emit(result, None)

    def _owner_alive(self) -> bool:
        return self.owner is None or shiboken6.isValid(self.owner)

    @Slot(object)
    def _deliver_progress(self, value: Any) -> None:
        if _receiver_alive(self.on_progress) and self._owner_alive() and not self.done:
            self.on_progress(value)

    @Slot(object, object)
    def _deliver_finished(self, result: Any, error: BaseException | None) -> None:
        self.done = True
        _live.discard(self)
        try:
            if not self._owner_alive():
                return
            if error is None:
                if _receiver_alive(self.on_done):
                    self.on_done(result)
            elif _receiver_alive(self.on_error):
                self.on_error(error)
        finally:
            self.deleteLater()


def _receiver_alive(callback: Callable | None) -> TypeGuard[Callable]:
    """False for no callback, or a method of a widget that was deleted while the call ran (window closed)."""
    if callback is None:
        return False
    owner = getattr(callback, "__self__", None)
    return not isinstance(owner, QObject) or shiboken6.isValid(owner)


def run_task(fn: Callable[..., Any], *args: Any, on_done: Callable[[Any], object] | None = None,
             on_error: Callable[[BaseException], object] | None = None,
             on_progress: Callable[[Any], object] | None = None, wants_progress: bool = False,
             wants_cancel: bool = False, owner: QObject | None = None, **kwargs: Any) -> Task:
    """Start ``fn(*args, **kwargs)`` on the pool; must be called on the GUI thread.

    ``owner``: the widget whose lambdas the callbacks are; they are skipped if it is deleted meanwhile
    (bound methods of widgets are checked without it)."""
    task = Task(fn, args, dict(kwargs), wants_progress=wants_progress, wants_cancel=wants_cancel)
    task.on_done, task.on_error, task.on_progress = on_done, on_error, on_progress
    task.owner = owner
    _live.add(task)
    pool().start(_Runnable(task))
    return task


def cancel_all() -> None:
    for task in list(_live):
        task.cancel()


def active_count() -> int:
    return len(_live)


def wait_for_pool(msecs: int = 3000) -> bool:
    """Only for shutdown, after the event loop has ended: let running calls see their cancel flag."""
    cancel_all()
    return pool().waitForDone(msecs)


class Debouncer(QObject):
    """Calls ``fn`` once, ``delay_ms`` after the last ``trigger()`` (e.g. re-plan while typing)."""

    def __init__(self, fn: Callable[[], None], delay_ms: int = 250, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(fn)

    def trigger(self) -> None:
        self._timer.start()

    @property
    def pending(self) -> bool:
        return self._timer.isActive()

    def flush(self) -> None:
        if self._timer.isActive():
            self._timer.stop()
            self._timer.timeout.emit()
