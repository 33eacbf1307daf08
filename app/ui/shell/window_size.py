"""How big the main window is: it comes from the screen it opens on, never larger than that screen's available
geometry (the part a panel or dock leaves), and a saved geometry that no longer fits the screen is shrunk to fit.

Before the window manager has framed the window its title bar is not known: ``FRAME_RESERVE`` stands in for it,
and once the window is shown ``fit_frame`` corrects the guess with the real frame."""

from __future__ import annotations

import logging

from PySide6.QtCore import QEvent, QMargins, QObject, QPoint, QRect, QSize, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

logger = logging.getLogger(__name__)

PREFERRED = QSize(1240, 820)  # what a 1920×1080 screen gets: room for both columns, the screen still shows around it
SHARE_W, SHARE_H = 1240 / 1920, 820 / 1080  # a bigger screen gives the same share of itself
FRAME_RESERVE = QMargins(4, 34, 4, 4)  # a window manager's borders and title bar, until the real ones are known


def first_size(available: QRect, frame: QMargins = FRAME_RESERVE) -> QSize:
    """The window's size (without its frame) on a screen whose available geometry is ``available``: a share of a
    big screen, all of a small one, its frame included."""
    room_w = available.width() - frame.left() - frame.right()
    room_h = available.height() - frame.top() - frame.bottom()
    width = max(PREFERRED.width(), round(available.width() * SHARE_W))
    height = max(PREFERRED.height(), round(available.height() * SHARE_H))
    return QSize(max(1, min(width, room_w)), max(1, min(height, room_h)))


def fit_frame(inner: QRect, frame: QMargins, available: QRect, *, move: bool = True) -> QRect:
    """``inner`` (the window without its ``frame``) shrunk so that the framed window fits ``available``, and, with
    ``move``, moved so that it lies inside it (a window's title bar off the screen cannot be dragged back)."""
    width = min(inner.width(), available.width() - frame.left() - frame.right())
    height = min(inner.height(), available.height() - frame.top() - frame.bottom())
    fitted = QRect(inner.topLeft(), QSize(max(1, width), max(1, height)))
    if not move:
        return fitted
    outer_w = fitted.width() + frame.left() + frame.right()
    outer_h = fitted.height() + frame.top() + frame.bottom()
    left = max(min(fitted.left() - frame.left(), available.right() + 1 - outer_w), available.left())
    top = max(min(fitted.top() - frame.top(), available.bottom() + 1 - outer_h), available.top())
    fitted.moveTopLeft(QPoint(left + frame.left(), top + frame.top()))
    return fitted


def centred(size: QSize, frame: QMargins, available: QRect) -> QRect:
    """``size`` placed in the middle of ``available``, its frame included."""
    outer_w = size.width() + frame.left() + frame.right()
    outer_h = size.height() + frame.top() + frame.bottom()
    left = available.left() + max(0, (available.width() - outer_w) // 2)
    top = available.top() + max(0, (available.height() - outer_h) // 2)
    return QRect(left + frame.left(), top + frame.top(), size.width(), size.height())


class ScreenFit(QObject):
    """Keeps a main window inside its screen's available geometry: its first size comes from that screen, a
    restored geometry is shrunk to fit it, and once the window is shown and framed by the window manager (the frame
    arrives a moment later) it is fitted again with the real frame, moved too if it sticks out."""

    SETTLE_MS = 3000  # how long after showing the window manager may still frame or place the window
    # platforms whose screen is made up (offscreen: 800×800): the window keeps the size it is given there, so
    # windows drawn offscreen (the tests, the screenshots) can be any size
    VIRTUAL_PLATFORMS: tuple[str, ...] = ("offscreen", "minimal")

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        self._settling = False
        self._shown = False
        self._first: QSize | None = None  # the first size given, until the real frame replaces the guess
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(lambda: self.fit(move=True))
        window.installEventFilter(self)

    @property
    def settled(self) -> bool:
        """Shown, and past the time the window manager may still frame or place it: fitted for good."""
        return self._shown and not self._settling

    def available(self) -> QRect:
        """The screen's available geometry; empty on a made-up screen (nothing to fit)."""
        if QGuiApplication.platformName() in self.VIRTUAL_PLATFORMS:
            return QRect()
        screen = self.window.screen() or QGuiApplication.primaryScreen()
        return screen.availableGeometry() if screen is not None else QRect()

    def frame(self) -> QMargins:
        """The window manager's borders and title bar around the window (``FRAME_RESERVE`` until it is framed)."""
        inner, outer = self.window.geometry(), self.window.frameGeometry()
        if not self.window.isVisible() or inner == outer:
            return FRAME_RESERVE
        return QMargins(inner.left() - outer.left(), inner.top() - outer.top(),
                        outer.right() - inner.right(), outer.bottom() - inner.bottom())

    def first_size(self) -> QSize:
        room = self.available()
        self._first = first_size(room) if not room.isEmpty() else None
        return self._first or PREFERRED

    def fit(self, *, move: bool) -> None:
        """Shrink the window (and with ``move`` move it) so that it, frame included, lies inside the screen."""
        window, room = self.window, self.available()
        if room.isEmpty() or window.windowState() & (Qt.WindowState.WindowMaximized | Qt.WindowState.WindowFullScreen):
            return
        frame = self.frame()
        if not window.isVisible():
            self._first = None  # a fit before showing is a restored geometry's: the user's size, not ours
        elif self._first is not None and window.size() == self._first and frame != FRAME_RESERVE:
            self._first = None  # framed now: the first size again, with the real frame instead of the guess
            window.setGeometry(centred(first_size(room, frame), frame, room))
            return
        fitted = fit_frame(window.geometry(), frame, room, move=move)
        if not move or not window.isVisible():
            if fitted.size() != window.size():
                window.resize(fitted.size())
            return
        if fitted != window.geometry():
            logger.debug("window fitted to the screen: %s -> %s (room %s)", window.geometry(), fitted, room)
            window.setGeometry(fitted)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.Show and not self._shown:
            self._shown = self._settling = True
            QTimer.singleShot(self.SETTLE_MS, self._settled)
            self._timer.start()
        elif self._settling and kind in (QEvent.Type.Move, QEvent.Type.Resize):
            self._timer.start()  # the window manager framed or placed it: fit again with what it did
        return False

    def _settled(self) -> None:
        self._settling = False
        self.fit(move=True)  # the last word, with the frame the window manager gave it meanwhile
