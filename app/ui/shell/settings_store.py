"""Saves the settings off the GUI thread: edits mark them dirty, one worker write follows a short pause."""

from __future__ import annotations

import copy

from PySide6.QtCore import QObject, QTimer

from app.core.settings import Settings
from app.ui.workers import run_task

SAVE_DELAY_MS = 400


class SettingsStore(QObject):
    def __init__(self, settings: Settings, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self._dirty = False
        self._writing = False
        self._timer = QTimer(self, singleShot=True, interval=SAVE_DELAY_MS)
        self._timer.timeout.connect(self._write)
        self.writes = 0

    def save_soon(self, delay_ms: int = SAVE_DELAY_MS) -> None:
        self._dirty = True
        self._timer.start(delay_ms)

    def _write(self) -> None:
        if self._writing:
            return  # written again when the current write is done
        if not self._dirty:
            return
        self._dirty, self._writing = False, True
        from app.core.atomic import write_json_atomic  # imported on first save: faster start-up

        snapshot = copy.deepcopy(self.settings.data)  # the worker never sees a dict being edited
        run_task(write_json_atomic, self.settings.path, snapshot, on_done=self._written, on_error=self._written)

    def _written(self, _result: object = None) -> None:
        self._writing = False
        self.writes += 1
        if self._dirty:
            self._write()

    @property
    def idle(self) -> bool:
        return not self._dirty and not self._writing and not self._timer.isActive()

    def flush_blocking(self) -> None:
        """At exit only (the event loop is over): write whatever is still pending."""
        self._timer.stop()
        if self._dirty:
            self._dirty = False
            self.settings.save()
