"""Under the conversation: "your last message was not answered" with Send again, and what the server is doing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGridLayout, QLabel, QPushButton, QWidget

from app.core.problem import Fix
from app.core.server.events import State

if TYPE_CHECKING:
    from app.core.chat import ChatError

RUNNING_STATES = frozenset({State.STARTING, State.LOADING, State.READY})
LOADING_STATES = frozenset({State.STARTING, State.LOADING})


class ChatStatus(QWidget):
    """``show_for(pending, connected, server_state, last_error)``; ``resendRequested`` on the button.

    ``server_state`` is None while nobody has said (a pane given a client directly, not a supervisor)."""

    resendRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.resend_label = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.resend_button = QPushButton(self)
        self.resend_button.clicked.connect(self.resendRequested)
        self.hint = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.hint.setStyleSheet("color: #666;")
        layout = QGridLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.resend_label, 0, 0)
        layout.addWidget(self.resend_button, 0, 1)
        layout.addWidget(self.hint, 1, 0, 1, 2)
        layout.setColumnStretch(0, 1)
        self._last: tuple = (False, False, None, None)
        self.show_for(*self._last)

    def retranslate(self) -> None:
        self.show_for(*self._last)

    def show_for(self, pending: bool, connected: bool, server_state: State | None,
                 last_error: ChatError | None) -> None:
        self._last = (pending, connected, server_state, last_error)
        server_down = server_state is not None and server_state not in RUNNING_STATES
        waiting = server_down or server_state in LOADING_STATES
        if waiting:
            sentence = self.tr("Your last message was not answered. It is kept; send it again once the model is ready.")
        else:
            sentence = self.tr("Your last message was not answered. It is kept and can be sent again.")
        self.resend_label.setText(sentence)
        action = last_error.action if last_error is not None else None  # a ChatError
        wait_longer = action is not None and action.kind is Fix.WAIT_LONGER
        self.resend_button.setText(self.tr("Wait longer and send again") if wait_longer else self.tr("Send again"))
        self.resend_button.setEnabled(pending and server_state in (None, State.READY))
        self.resend_label.setVisible(pending)
        self.resend_button.setVisible(pending)
        hint = ""
        if not connected or server_down:
            hint = self.tr("The model is not running. Start it in the Server section, then chat here.")
        elif server_state in LOADING_STATES:
            hint = self.tr("The model is loading; a message sent now waits until it is ready.")
        self.hint.setText(hint)
        self.hint.setVisible(bool(hint))
