""""Before the talk" as it is drawn: each row's status icon sits level with the first line of its sentence, and a
screen that cannot be kept awake is said in plain words (what it means, what to do) in both languages."""

from __future__ import annotations

import sys

from PySide6.QtGui import QColor, QImage

from app.core.presenter import awake
from app.core.presenter.awake import ScreenAwake
from app.core.presenter.preflight import PreflightInputs, preflight_checks
from app.core.text import set_language
from app.ui.shell.presenter import PreflightDialog

RAW = "Failed to connect to bus: No such file or directory"
MAX_OFFSET_PX = 2


def _ink_rows(image: QImage, background: QColor) -> list[int]:
    """The rows of ``image`` with a pixel that differs clearly from ``background`` (text or badge ink)."""
    rows = []
    for y in range(image.height()):
        for x in range(image.width()):
            pixel = image.pixelColor(x, y)
            if pixel.alpha() > 128 and abs(pixel.lightness() - background.lightness()) > 60:
                rows.append(y)
                break
    return rows


def _first_line_middle(rows: list[int]) -> float:
    """The middle of the first band of ink rows (the first line of a wrapped sentence)."""
    end = rows[0]
    while end + 1 in rows:
        end += 1
    return (rows[0] + end) / 2


def _unplain_awake(monkeypatch) -> ScreenAwake:
    monkeypatch.setattr(awake, "inhibit_command", lambda: [sys.executable, "-c", f"import sys; sys.exit({RAW!r})"])
    screen = ScreenAwake()
    assert not screen.start()
    return screen


def test_icons_sit_level_with_their_sentences_and_the_awake_row_is_plain(qtbot, monkeypatch):
    screen = _unplain_awake(monkeypatch)
    checks = preflight_checks(PreflightInputs(model_usable=True, engine_ok=True, memory_fraction=0.5,
                                              awake_reason=screen.unavailable_reason))
    dialog = PreflightDialog()
    qtbot.addWidget(dialog)
    dialog.rows.set_checks(checks)
    dialog.show()
    qtbot.waitExposed(dialog)
    try:
        for lang in ("en", "zh"):
            set_language(lang)
            dialog.retranslate()
            qtbot.waitUntil(lambda: dialog.rows.rows[0][1].isVisible(), timeout=5_000)
            background = dialog.rows.palette().window().color()
            for icon, label, _button in dialog.rows.rows:
                assert RAW not in label.text() and "bus" not in label.text()
                icon_rows = _ink_rows(icon.grab().toImage(), background)
                text_rows = _ink_rows(label.grab().toImage(), background)
                icon_middle = icon.y() + (icon_rows[0] + icon_rows[-1]) / 2
                text_middle = label.y() + _first_line_middle(text_rows)
                assert abs(icon_middle - text_middle) <= MAX_OFFSET_PX, (lang, label.text(), icon_middle, text_middle)
            awake_row = next(label.text() for _i, label, _b in dialog.rows.rows if label.objectName() == "check-awake")
            assert ("no desktop session service" in awake_row) if lang == "en" else ("没有桌面会话服务" in awake_row)
    finally:
        set_language("en")
