"""Issue 11, point 7: Ctrl +/- zoom (kept in the settings), shortcuts for the main actions, Enter presses the
focused button, and Tab walks the path (open a model, find safe settings, start, chat) first."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication

from app.core.settings import load_settings
from app.ui.shell import zoom
from tests.ui.conftest import LONG, open_and_wait


def _points() -> float:
    return QApplication.font().pointSizeF()


def test_zoom_steps_stay_inside():
    assert zoom.next_step(100, +1) == 110
    assert zoom.next_step(100, -1) == 90
    assert zoom.next_step(300, +1) == 300
    assert zoom.next_step(50, -1) == 50


def test_zoom_changes_the_font_and_is_saved(qtbot, window):
    base = _points()
    title = window.steps[0].title
    title_base = title.font().pointSizeF()
    styled = window.server.badge  # a label with a style sheet of its own keeps the font it found unless told
    styled.ensurePolished()
    styled_base = styled.font().pointSizeF()
    window.menus.command_actions["zoom_in"].trigger()
    window.menus.command_actions["zoom_in"].trigger()
    assert window.zoom.percent == 125
    assert _points() > base * 1.2
    assert title.font().pointSizeF() > title_base * 1.2  # the bold titles grow too
    styled.ensurePolished()
    assert styled.font().pointSizeF() > styled_base * 1.2
    qtbot.waitUntil(lambda: window.store.idle and load_settings().zoom_percent == 125, timeout=LONG)
    window.menus.command_actions["zoom_out"].trigger()
    assert window.zoom.percent == 110
    window.menus.command_actions["zoom_reset"].trigger()
    assert window.zoom.percent == 100
    assert abs(_points() - base) < 0.01
    assert abs(title.font().pointSizeF() - title_base) < 0.01
    qtbot.waitUntil(lambda: window.store.idle and load_settings().zoom_percent == 100, timeout=LONG)


def test_zoom_is_restored(qtbot, qapp):
    from app.ui.shell.main_window import MainWindow

    settings = load_settings()
    base = _points()
    settings.zoom_percent = 150
    win = MainWindow(settings, live_hardware=False)
    try:
        assert win.zoom.percent == 150
        assert abs(_points() - base * 1.5) < 0.01
        assert win.menus.command_actions["zoom_reset"].shortcut().toString() == "Ctrl+0"
    finally:
        win.zoom.apply(100)
        win._close_state = "done"
        win.close()
        win.deleteLater()


KEYS = {  # command -> (key, modifiers) a user presses
    "start": (Qt.Key.Key_F5, Qt.KeyboardModifier.NoModifier),
    "stop": (Qt.Key.Key_F5, Qt.KeyboardModifier.ShiftModifier),
    "restart": (Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier),
    "probe": (Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier),
    "new_chat": (Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier),
}


def test_shortcuts_trigger_their_actions(qtbot, window, tiny_model):
    qtbot.waitUntil(lambda: window.chat_tab.pane is not None, timeout=LONG)
    open_and_wait(qtbot, window, tiny_model)  # the safe-settings button shows once a model is open
    taken = {QKeySequence(QKeySequence.StandardKey.Open), QKeySequence(QKeySequence.StandardKey.Quit)}
    for act in window.menus.command_actions.values():
        assert not set(act.shortcuts()) & taken, act.text()  # Ctrl+O and Ctrl+Q keep their meaning
    buttons = {"start": window.server.start_button, "stop": window.server.stop_button,
               "restart": window.server.restart_button, "probe": window.settings_panel.probe.run_button,
               "new_chat": window.chat_tab.pane.new_button}
    pressed = []
    for name, button in buttons.items():
        button.clicked.disconnect()
        button.clicked.connect(lambda _=False, n=name: pressed.append(n))
        button.setEnabled(True)
        button.setVisible(True)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=LONG)
    for name, (key, modifiers) in KEYS.items():
        qtbot.keyClick(window.left_scroll, key, modifiers)
        qtbot.waitUntil(lambda n=name: pressed[-1:] == [n], timeout=LONG)
    window.server.start_button.setEnabled(False)  # a disabled button is not pressed by its shortcut
    qtbot.keyClick(window.left_scroll, Qt.Key.Key_F5)
    assert pressed[-1] == "new_chat"
    qtbot.keyClick(window.left_scroll, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.chat_tab.pane.input, timeout=LONG)
    assert "F5" in window.menus.shortcut_text("start")


def test_enter_presses_the_focused_button(qtbot, window):
    button = window.model.demo_button
    pressed = []
    button.clicked.disconnect()
    button.clicked.connect(lambda: pressed.append(True))
    window.activateWindow()
    button.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is button, timeout=LONG)
    qtbot.keyClick(button, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: pressed == [True], timeout=LONG)


def test_tab_walks_the_path_first(qtbot, window):
    qtbot.waitUntil(lambda: window.chat_tab.pane is not None, timeout=LONG)
    chain = [window.model.open_button, window.model.demo_button, window.settings_panel.probe.run_button,
             window.server.start_button, window.server.stop_button, window.server.restart_button,
             window.chat_tab.pane.input, window.chat_tab.pane.send_button]
    for first, second in zip(chain, chain[1:], strict=False):
        assert first.nextInFocusChain() is second or _next_focusable(first) is second, (first, second)
    assert window.server.url_value.focusPolicy() != Qt.FocusPolicy.TabFocus  # Shift+Tab no longer sticks there


def _next_focusable(widget):
    nxt = widget.nextInFocusChain()
    while nxt is not widget and not (nxt.focusPolicy() & Qt.FocusPolicy.TabFocus):
        nxt = nxt.nextInFocusChain()
    return nxt
