"""Issue 11, point 7: a layout that adapts. The window never resizes itself (a crash card, a language switch),
the two columns share the width in proportion, the left column never scrolls sideways."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from app.core.diagnosis import diagnose
from tests.paths import CRASH_LOGS

SIZES = [(1024, 700), (1440, 900), (1920, 1080)]


def _settle(qtbot) -> None:
    for _ in range(3):
        QApplication.processEvents()
        qtbot.wait(30)


def _crash(win) -> None:
    lines = (CRASH_LOGS / "cuda_oom_on_load.txt").read_text(encoding="utf-8").splitlines()
    win.server.show_diagnosis(diagnose(134, lines, None, block_count=28))


@pytest.mark.parametrize("size", SIZES)
def test_window_keeps_its_size(qtbot, window, size):
    window.resize(*size)
    _settle(qtbot)
    assert (window.width(), window.height()) == size
    _crash(window)
    _settle(qtbot)
    assert (window.width(), window.height()) == size, "a crash card grew the window"
    window.set_language("zh")
    _settle(qtbot)
    assert (window.width(), window.height()) == size, "the language switch grew the window"
    window.banner.show_text("x " * 400)
    _settle(qtbot)
    assert (window.width(), window.height()) == size, "a banner grew the window"
    window.set_language("en")


@pytest.mark.parametrize("size", SIZES)
def test_columns_share_the_width(qtbot, window, size):
    window.resize(*size)
    _settle(qtbot)
    left, right = window.splitter.sizes()
    share = left / (left + right)
    assert 0.36 <= share <= 0.5, (size, left, right)


def test_left_column_never_scrolls_sideways(qtbot, window):
    window.resize(1024, 700)
    for lang in ("en", "zh"):
        window.set_language(lang)
        _settle(qtbot)
        bar = window.left_scroll.horizontalScrollBar()
        assert not bar.isVisible() or bar.maximum() == 0, lang
    window.set_language("en")


def test_crash_card_wraps_inside_the_column(qtbot, window):
    window.resize(1024, 700)
    _crash(window)
    window.set_language("zh")
    _settle(qtbot)
    card = window.server.crash_card
    assert card.isVisible()
    assert card.width() <= window.server.width()
    assert window.server_step.geometry().right() <= window.splitter.widget(1).width() + 1
    window.set_language("en")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_crash_card_lines_are_not_sliced(qtbot, window, lang):
    from PySide6.QtWidgets import QLabel

    window.resize(1024, 700)
    _crash(window)
    window.set_language(lang)
    _settle(qtbot)
    labels = [label for label in window.server.crash_card.findChildren(QLabel) if label.isVisibleTo(window)]
    assert labels
    for label in labels:
        if label.wordWrap():
            assert label.height() >= label.heightForWidth(label.width()) - 1, label.text()[:60]
        else:
            assert label.width() >= label.sizeHint().width() - 1, label.text()[:60]
    window.set_language("en")
