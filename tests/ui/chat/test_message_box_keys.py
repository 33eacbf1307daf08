"""The message box's keys: Tab moves on to the next control (as in every other field of the window); it never
types a tab character into the message."""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.ui.chat.chat_pane import ChatPane


def test_tab_in_the_message_box_moves_focus_and_types_nothing(qtbot):
    pane = ChatPane()
    try:
        pane.show()
        pane.activateWindow()
        pane.input.setFocus(Qt.FocusReason.OtherFocusReason)
        qtbot.waitUntil(lambda: pane.input.hasFocus(), timeout=5_000)
        pane.input.setPlainText("hello")
        qtbot.keyClick(pane.input, Qt.Key.Key_Tab)
        assert pane.input.toPlainText() == "hello"
        qtbot.waitUntil(lambda: QApplication.focusWidget() is not pane.input, timeout=5_000)
    finally:
        pane.shutdown()
        pane.close()
        pane.deleteLater()
        qtbot.waitUntil(lambda: not shiboken6.isValid(pane), timeout=5_000)
