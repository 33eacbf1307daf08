"""The server follows the model: opening another model while a server runs (or starts) asks what to do with it.

"The server is still running <old>. Restart it with <new>?" — Restart (with the new model's settings, once its
checks are done), Stop it, or Keep it running. What each answer does is core's rule (``switch_action``); the
question is a window-modal box opened without a nested event loop, so the checks and the server carry on meanwhile.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal

from app.core.session import (
    SWITCH_KEEP,
    SWITCH_RESTART,
    SWITCH_STOP,
    ask_before_switch,
    switch_action,
)

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget

    from app.core.launch.config import LaunchConfig
    from app.ui.shell.session_owner import SessionOwner
    from app.ui.steps.server.server_control import ServerControl


class ModelSwitch(QObject):
    """``message(str)``: a sentence for the status bar after the user's answer."""

    message = Signal(str)

    def __init__(self, window: QWidget, control: ServerControl, owner: SessionOwner,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.window, self.control, self.session = window, control, owner.session
        self.box: QMessageBox | None = None  # the open question, if any
        self.buttons: dict[str, QPushButton] = {}
        self._asked: tuple[str, str] | None = None  # (server's model, opened model) of the open question
        self._waiting: tuple[str, str] | None = None  # (choice, path): Restart waits for the new model's checks
        owner.opened.connect(self.on_model_chosen)
        owner.configured.connect(self.on_model_configured)  # the owner's order: the model's settings are there

    def server_model(self) -> str | None:
        sup = self.control.supervisor
        return sup.config.model if sup is not None else None

    def on_model_chosen(self, path: str) -> None:
        self._close_box()
        self._waiting = None
        old = self.server_model()
        if old is not None and ask_before_switch(old, self.control.is_running(), path):
            self._ask(old, path)

    def _ask(self, old: str, new: str) -> None:
        from PySide6.QtWidgets import QMessageBox  # dialogs are imported when used: faster start-up

        box = QMessageBox(self.window)
        box.setIcon(QMessageBox.Icon.Question)
        box.setTextFormat(Qt.TextFormat.PlainText)  # file names are shown as typed, never as rich text
        self.buttons = {
            SWITCH_RESTART: box.addButton("", QMessageBox.ButtonRole.AcceptRole),
            SWITCH_STOP: box.addButton("", QMessageBox.ButtonRole.DestructiveRole),
            SWITCH_KEEP: box.addButton("", QMessageBox.ButtonRole.RejectRole),
        }
        box.setDefaultButton(self.buttons[SWITCH_RESTART])
        box.setEscapeButton(self.buttons[SWITCH_KEEP])
        box.setWindowModality(Qt.WindowModality.WindowModal)
        choices = {button: choice for choice, button in self.buttons.items()}
        box.buttonClicked.connect(lambda button: self.choose(choices.get(button, SWITCH_KEEP), new))
        self.box, self._asked = box, (old, new)
        self.retranslate()
        box.open()

    def retranslate(self) -> None:
        """The open question in the language just chosen (a language switch while it is open)."""
        if self.box is None or self._asked is None:
            return
        old, new = (os.path.basename(path) for path in self._asked)
        self.box.setWindowTitle(self.tr("Another model"))
        self.box.setText(self.tr("The server is still running {old}. Restart it with {new}?").format(old=old, new=new))
        self.box.setInformativeText(self.tr("Until it restarts, the chat is answered by {old}.").format(old=old))
        for choice, caption in ((SWITCH_RESTART, self.tr("Restart")), (SWITCH_STOP, self.tr("Stop it")),
                                (SWITCH_KEEP, self.tr("Keep it running"))):
            self.buttons[choice].setText(caption)

    def _close_box(self) -> None:
        box, self.box, self.buttons, self._asked = self.box, None, {}, None
        if box is not None:
            box.buttonClicked.disconnect()
            box.close()
            box.deleteLater()

    def choose(self, choice: str, path: str) -> None:
        """The user's answer for the model at ``path`` (ignored when another model was opened since)."""
        self._close_box()
        if not self.session.is_for(path):
            return
        checked = self.session.checked
        usable = None if checked is None else checked.usable and self.session.config is not None
        action = switch_action(choice, usable)
        if action is None:
            self._waiting = (choice, path)
            self.message.emit(self.tr("The server restarts with {new} once its checks are done.").format(
                new=os.path.basename(path)))
            return
        self._act(action, path, choice)

    def on_model_configured(self, config: LaunchConfig | None) -> None:
        """The opened model's checks are done and its settings (if it can run) are in the session."""
        if self._waiting is None:
            return
        choice, path = self._waiting
        checked = self.session.checked
        if checked is None or checked.path != path or not self.session.is_for(path):
            return
        self._waiting = None
        action = switch_action(choice, checked.usable and config is not None)  # the checks are in: never None
        if action is not None:
            self._act(action, path, choice)

    def _act(self, action: str, path: str, choice: str) -> None:
        old = self.server_model()
        name = os.path.basename(old) if old else ""
        if action == SWITCH_RESTART:
            self.control.restart()  # the session's config is the new model's: a new server for it
        elif action == SWITCH_STOP:
            self.control.stop()
            if choice == SWITCH_RESTART:  # the new model cannot run: the old one is not kept either
                self.message.emit(self.tr("{new} did not pass its checks, so the server for {old} was stopped.")
                                  .format(new=os.path.basename(path), old=name))
        elif old:
            self.message.emit(self.tr("The server keeps running {old}; each answer in the chat names its model.")
                              .format(old=name))
