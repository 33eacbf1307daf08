"""The wheel scrolls past an unfocused combo or spin box (the column scrolls, the value stays); focused, it edits."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDoubleSpinBox,
    QScrollArea,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.ui.widgets.wheel_guard import guard_wheel, is_guarded

NOTCH = 120  # one wheel notch; negative is "down": the next item, the lower value, the scroll bar moves down


def wheel(widget: QWidget, delta: int = -NOTCH) -> None:
    centre = QPointF(widget.rect().center())
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0), QPoint(0, delta),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def column(qtbot, field: QWidget) -> QScrollArea:
    """A short scroll area over a tall column with ``field`` in its middle, scrolled to the top."""
    content = QWidget()
    layout = QVBoxLayout(content)
    layout.addSpacing(300)
    layout.addWidget(field)
    layout.addSpacing(1200)
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setWidget(content)
    area.resize(300, 400)
    qtbot.addWidget(area)
    area.show()
    qtbot.waitExposed(area)
    assert area.verticalScrollBar().maximum() > 0 and area.verticalScrollBar().value() == 0
    return area


def kv_combo() -> QComboBox:
    combo = QComboBox()
    combo.addItems(["f16", "bf16", "q8_0", "iq4_nl"])
    return combo


def spin() -> QSpinBox:
    box = QSpinBox()
    box.setRange(0, 100)
    box.setValue(50)
    return box


def double_spin() -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(0.0, 2.0)
    box.setValue(1.0)
    return box


def value(widget: QWidget) -> object:
    return widget.currentIndex() if isinstance(widget, QComboBox) else widget.value()


@pytest.mark.parametrize("make", [kv_combo, spin, double_spin], ids=["combo", "spin", "double-spin"])
def test_wheel_over_an_unfocused_field_scrolls_the_column_and_keeps_the_value(qtbot, make):
    field = make()
    guard_wheel(field)
    area = column(qtbot, field)
    before = value(field)
    assert field.focusPolicy() == Qt.FocusPolicy.StrongFocus and not field.hasFocus()
    wheel(field)
    assert value(field) == before
    assert area.verticalScrollBar().value() > 0  # the wheel went on to the column
    assert not field.hasFocus()  # and did not give the field focus on the way


@pytest.mark.parametrize("make", [kv_combo, spin, double_spin], ids=["combo", "spin", "double-spin"])
def test_wheel_over_a_focused_field_changes_it(qtbot, make):
    field = make()
    guard_wheel(field)
    area = column(qtbot, field)
    before = value(field)
    field.setFocus()
    qtbot.waitUntil(field.hasFocus)
    wheel(field)
    assert value(field) != before
    assert area.verticalScrollBar().value() == 0


def test_without_a_scroll_area_the_unfocused_field_still_keeps_its_value(qtbot):
    combo = kv_combo()
    qtbot.addWidget(combo)
    guard_wheel(combo, combo)  # twice is harmless
    combo.show()
    wheel(combo)
    assert combo.currentIndex() == 0 and is_guarded(combo)


def test_every_combo_spin_box_and_slider_in_the_window_is_guarded(window):
    fields = [w for kind in (QComboBox, QAbstractSpinBox, QSlider) for w in window.findChildren(kind)]
    assert len(fields) >= 10  # settings, advanced options, chat parameters, saved conversations
    unguarded = [f"{type(w).__name__} {w.objectName() or w.parentWidget().__class__.__name__}"
                 for w in fields if not is_guarded(w)]
    assert not unguarded
