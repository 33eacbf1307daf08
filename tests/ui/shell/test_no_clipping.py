"""Issue 11, "Screenshots as tests": at 1024×700, 1440×900 and 1920×1080, in English and Chinese, no label or
button in the main states that need no server (first run, a model checked, a crash card, the
Logs tab) has its text cut."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from tests.ui.clipping import clipped
from tests.ui.conftest import open_and_wait, wait_for_plan
from tests.ui.shell.test_layout import _crash

SIZES = [(1024, 700), (1440, 900), (1920, 1080)]


def _settle(qtbot) -> None:
    for _ in range(3):
        QApplication.processEvents()
        qtbot.wait(30)


def _check(qtbot, window, state: str, problems: list[str]) -> None:
    for lang in ("en", "zh"):
        window.set_language(lang)
        _settle(qtbot)
        problems += [f"{state} {lang}: {line}" for line in clipped(window)]
    window.set_language("en")


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.slow  # 1.7 s for each size: four states in two languages, each let settle
def test_no_text_is_clipped(qtbot, window, tiny_model, size):
    window.resize(*size)
    _settle(qtbot)
    problems: list[str] = []
    _check(qtbot, window, "first-run", problems)
    open_and_wait(qtbot, window, tiny_model)
    wait_for_plan(qtbot, window)
    _check(qtbot, window, "model-checked", problems)
    _crash(window)
    _check(qtbot, window, "crash-card", problems)
    window.tabs.setCurrentIndex(1)
    _check(qtbot, window, "logs", problems)
    window.tabs.setCurrentIndex(0)
    assert (window.width(), window.height()) == size
    assert not problems, "\n".join(problems)


def test_the_check_sees_cut_text(qtbot):
    from PySide6.QtWidgets import QLabel, QPushButton, QScrollArea, QVBoxLayout, QWidget

    top = QWidget()
    qtbot.addWidget(top)
    layout = QVBoxLayout(top)
    fits = QLabel("ok")
    cut = QLabel("a label far too long for the forty pixels it is given")
    cut.setFixedWidth(40)
    wrapped = QLabel("a wrapped label with many words " * 8)
    wrapped.setWordWrap(True)
    wrapped.setFixedSize(120, 20)
    button = QPushButton("A button with a long caption")
    button.setFixedWidth(50)
    area = QScrollArea()
    wide = QLabel("x" * 200)
    area.setWidget(wide)
    area.setFixedWidth(100)
    from PySide6.QtWidgets import QComboBox

    combo = QComboBox()
    combo.addItem("an item far longer than the combo box that shows it")
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(3)
    combo.setFixedWidth(80)
    for widget in (fits, cut, wrapped, button, area, combo):
        layout.addWidget(widget)
    top.show()
    qtbot.waitExposed(top)
    found = "\n".join(clipped(top))
    assert "'ok'" not in found
    assert "forty pixels" in found and "many words" in found and "long caption" in found, found
    assert "runs sideways" in found and "an item far longer" in found, found


def test_the_check_looks_at_the_window(qtbot, window):
    from PySide6.QtWidgets import QLabel

    window.resize(1024, 700)
    _settle(qtbot)
    assert sum(label.isVisibleTo(window) for label in window.findChildren(QLabel)) > 10
