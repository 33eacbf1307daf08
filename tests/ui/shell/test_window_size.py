"""Issue 25, item 1: the first window comes from the screen it opens on (never larger than its available
geometry; a share of a big screen), and a saved geometry that no longer fits the screen is shrunk to fit.

The offscreen platform's screen is a real Qt screen of 800×800; the window keeps any size it is given there (the
other tests draw it at 1920×1080), so these tests fit it to that screen as they would to a real one. The same is
checked on real X screens with a window manager in tests/ui/real_screen/."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QByteArray, QMargins, QRect, QSize
from PySide6.QtWidgets import QApplication

from app.ui.shell import window_size
from app.ui.shell.window_size import FRAME_RESERVE, first_size, fit_frame
from tests.ui.conftest import LONG

FRAME = QMargins(1, 29, 1, 1)  # openbox's title bar and borders, as measured under Xvfb


@pytest.mark.parametrize(("screen", "expected"), [
    ((1920, 1080), (1240, 820)),
    ((1366, 768), (1240, 730)),
    ((1024, 700), (1016, 662)),
    ((2560, 1440), (1653, 1093)),
])
def test_first_size_is_a_share_of_a_big_screen_and_all_of_a_small_one(screen, expected):
    room = QRect(0, 0, *screen)
    size = first_size(room)
    assert (size.width(), size.height()) == expected
    assert size.width() + FRAME_RESERVE.left() + FRAME_RESERVE.right() <= screen[0]
    assert size.height() + FRAME_RESERVE.top() + FRAME_RESERVE.bottom() <= screen[1]


def test_fit_frame_shrinks_and_moves_a_window_into_the_room():
    room = QRect(0, 24, 1366, 744)  # a panel takes the top 24 px
    fitted = fit_frame(QRect(300, 200, 1240, 820), FRAME, room)
    outer = fitted.adjusted(-FRAME.left(), -FRAME.top(), FRAME.right(), FRAME.bottom())
    assert room.contains(outer), (fitted, outer)
    assert fitted.width() == 1240 and fitted.height() == 744 - 30
    kept = fit_frame(QRect(100, 100, 800, 500), FRAME, room)
    assert kept == QRect(100, 100, 800, 500)  # a window that fits stays where it is


@pytest.fixture
def real_fit(monkeypatch):
    """Fit to the offscreen screen as to a real one."""
    monkeypatch.setattr(window_size.ScreenFit, "VIRTUAL_PLATFORMS", ())
    monkeypatch.setattr(window_size.ScreenFit, "SETTLE_MS", 200)
    return QApplication.primaryScreen().availableGeometry()


def _make_window():
    from app.core.settings import load_settings
    from app.ui.shell.main_window import MainWindow

    return MainWindow(load_settings(), live_hardware=False)


def _close(qtbot, win) -> None:
    win.close()
    qtbot.waitUntil(lambda: win._close_state == "done", timeout=LONG)
    win.shutdown_blocking()
    win.deleteLater()


def test_first_window_fits_the_screen_it_opens_on(qtbot, real_fit):
    win = _make_window()
    try:
        assert win.width() <= real_fit.width() and win.height() <= real_fit.height(), (win.size(), real_fit)
        win.show()
        qtbot.waitExposed(win)
        qtbot.waitUntil(lambda: real_fit.contains(win.frameGeometry()), timeout=LONG)
    finally:
        _close(qtbot, win)


def test_a_saved_geometry_too_big_for_this_screen_is_shrunk(qtbot, real_fit, monkeypatch):
    from app.core.settings import load_settings

    monkeypatch.setattr(window_size.ScreenFit, "VIRTUAL_PLATFORMS", ("offscreen",))
    big = _make_window()  # saved on a bigger screen: 1500×1000 at (300, 200)
    big.setGeometry(300, 200, 1500, 1000)
    assert big.size() == QSize(1500, 1000)
    saved = bytes(big.saveGeometry().toBase64()).decode("ascii")
    big.deleteLater()
    settings = load_settings()
    settings.set("window_geometry", saved)
    settings.save()
    monkeypatch.setattr(window_size.ScreenFit, "VIRTUAL_PLATFORMS", ())
    win = _make_window()
    try:
        assert win.width() <= real_fit.width() and win.height() <= real_fit.height(), (win.size(), real_fit)
        win.show()
        qtbot.waitExposed(win)
        qtbot.waitUntil(lambda: real_fit.contains(win.frameGeometry()), timeout=LONG)
        assert QByteArray.fromBase64(saved.encode("ascii"))  # the saved one was really bigger than the screen
    finally:
        _close(qtbot, win)
