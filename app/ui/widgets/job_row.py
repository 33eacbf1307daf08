"""One background job's row: a sentence, a progress bar (a fraction, or Qt's busy bar), Cancel and an optional
extra action (a download's Pause/Resume), driven through a ``JobState``.

The owner runs the job and says what happens (``start``, ``set_progress``, ``cancelling``, ``finish``); the row
keeps the state, shows the bar and the buttons only while the job is under way (``JobState.active``), shows the
sentence while it has one, and hides itself when there is nothing to show. Sentences are the owner's, already
translated: the owner re-sends them (``say``) when the language changes. A download's "speed, time left" is part of
the sentence it passes to ``set_progress``.

Signals carry values: ``stateChanged(JobState)``; ``cancelClicked()`` and ``actionClicked()`` when the user presses
a button (the owner cancels or pauses its job and reports the new state).
"""

from __future__ import annotations

from enum import StrEnum

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from app.ui.i18n import Retranslating


class JobState(StrEnum):
    IDLE = "idle"  # nothing started, or an outcome put away
    RUNNING = "running"
    PAUSED = "paused"  # stopped by the user, to be resumed (a download); Cancel still works
    CANCELLING = "cancelling"  # Cancel was pressed; the job has not stopped yet
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def active(self) -> bool:
        """Started and not finished: the bar and Cancel are shown."""
        return self in (JobState.RUNNING, JobState.PAUSED, JobState.CANCELLING)

    @property
    def finished(self) -> bool:
        return self in (JobState.DONE, JobState.FAILED, JobState.CANCELLED)


class JobRow(Retranslating, QWidget):
    """``status`` (the sentence, above the bar; ``label_outside=True``: the owner lays it out), ``progress`` and
    ``cancel_button`` on one line, with ``action_button`` before Cancel once ``set_action`` gave it a text."""

    stateChanged = Signal(JobState)
    cancelClicked = Signal()
    actionClicked = Signal()

    def __init__(self, parent: QWidget | None = None, *, label_outside: bool = False) -> None:
        super().__init__(parent)
        self.state = JobState.IDLE
        self._label_inside = not label_outside
        self.status = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText,
                             textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse)
        self.progress = QProgressBar(self)
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(10)
        self.progress.setRange(0, 0)
        self.action_button = QPushButton(self)
        self.action_button.clicked.connect(self.actionClicked)
        self.cancel_button = QPushButton(self)
        self.cancel_button.clicked.connect(self._on_cancel_clicked)
        line = QHBoxLayout()
        line.setContentsMargins(0, 0, 0, 0)
        line.addWidget(self.progress, 1)
        line.addWidget(self.action_button)
        line.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        if self._label_inside:
            layout.addWidget(self.status)
        layout.addLayout(line)
        self._set_texts()
        self._render()

    @property
    def has_content(self) -> bool:
        """A job under way, or a sentence to show in this row."""
        return self.state.active or (self._label_inside and bool(self.status.text()))

    # --- what the owner's job does ----------------------------------------------------------------

    def start(self, sentence: str = "", *, busy: bool = True) -> None:
        """The job began: a busy bar (``busy``) or an empty one that ``set_progress`` fills."""
        self.progress.setRange(0, 0 if busy else 1)
        self.progress.setValue(0)
        self._move(JobState.RUNNING, sentence)

    def set_progress(self, done: int, total: int, sentence: str | None = None) -> None:
        """``done`` of ``total`` (``total`` 0: busy, the size is not known yet); ``sentence`` when it changed."""
        self.progress.setRange(0, max(total, 0))
        self.progress.setValue(min(max(done, 0), max(total, 0)))
        if sentence is not None:
            self.say(sentence)

    def say(self, sentence: str) -> None:
        """A new sentence, the state unchanged (a step of the job, or the same outcome in another language)."""
        self.status.setText(sentence)
        self._render()

    def pause(self, sentence: str = "") -> None:
        if self.state is JobState.RUNNING:
            self._move(JobState.PAUSED, sentence)

    def resume(self, sentence: str = "") -> None:
        if self.state is JobState.PAUSED:
            self._move(JobState.RUNNING, sentence)

    def cancelling(self, sentence: str = "") -> None:
        """Cancel was asked for: Cancel is greyed out and the bar is busy until the job says it stopped."""
        if self.state in (JobState.RUNNING, JobState.PAUSED):
            self.progress.setRange(0, 0)
            self._move(JobState.CANCELLING, sentence)

    def finish(self, state: JobState, sentence: str = "") -> None:
        """The job ended (``DONE``, ``FAILED``, ``CANCELLED``) or its outcome is put away (``IDLE``)."""
        if state.active:
            raise ValueError(f"a job finishes in an ending state, not {state!r}")
        self._move(state, sentence)

    def reset(self) -> None:
        """Nothing to show: idle, no sentence."""
        self.finish(JobState.IDLE)

    def set_action(self, text: str | None) -> None:
        """The extra button's text (None: no extra button); shown while the job is under way."""
        self.action_button.setText(text or "")
        self._render()

    # --- inside -----------------------------------------------------------------------------------

    def retranslate(self) -> None:
        self._set_texts()

    def _set_texts(self) -> None:
        self.cancel_button.setText(self.tr("Cancel"))

    def _on_cancel_clicked(self) -> None:
        if self.state in (JobState.RUNNING, JobState.PAUSED):
            self.cancelClicked.emit()

    def _move(self, state: JobState, sentence: str) -> None:
        changed = state is not self.state
        self.state = state
        self.status.setText(sentence)
        self._render()
        if changed:
            self.stateChanged.emit(state)

    def _render(self) -> None:
        active = self.state.active
        self.progress.setVisible(active)
        self.cancel_button.setVisible(active)
        self.cancel_button.setEnabled(self.state in (JobState.RUNNING, JobState.PAUSED))
        self.action_button.setVisible(active and bool(self.action_button.text()))
        self.action_button.setEnabled(self.state in (JobState.RUNNING, JobState.PAUSED))
        self.status.setVisible(bool(self.status.text()))
        self.setVisible(self.has_content)
