"""A check row with a fix button is taller than its sentence: the sentence still starts level with its icon, and
the icon's tooltip is a translated word, not the status's internal value."""

from __future__ import annotations

from app.core.problem import Check, Fix, FixAction, Status
from app.core.text import T
from app.ui import i18n
from app.ui.widgets.check_list import CheckList
from tests.ui.shell.test_presenter_checklist import MAX_OFFSET_PX, _first_line_middle, _ink_rows


def _row_with_fix() -> Check:
    return Check("path", Status.ERROR, T("The model's folder name has characters this engine cannot open.",
                                         "模型所在文件夹的名称含有此引擎无法打开的字符。"),
                 next_step=T("Copy it to a safe folder.", "把它复制到安全的文件夹。"),
                 action=FixAction(Fix.COPY_TO_SAFE_PATH))


def test_a_row_with_a_fix_button_keeps_its_sentence_level_with_its_icon(qtbot):
    rows = CheckList(fold_passed=False)
    qtbot.addWidget(rows)
    rows.resize(520, 200)
    rows.set_checks([_row_with_fix()])
    rows.show()
    qtbot.waitExposed(rows)
    icon, label, button = rows.rows[0]
    qtbot.waitUntil(lambda: label.isVisible() and button is not None and button.isVisible(), timeout=5_000)
    background = rows.palette().window().color()
    icon_rows = _ink_rows(icon.grab().toImage(), background)
    text_rows = _ink_rows(label.grab().toImage(), background)
    icon_middle = icon.y() + (icon_rows[0] + icon_rows[-1]) / 2
    text_middle = label.y() + _first_line_middle(text_rows)
    assert abs(icon_middle - text_middle) <= MAX_OFFSET_PX, (icon_middle, text_middle, button.height())


def test_the_icons_tooltip_is_a_word_in_the_users_language(qtbot):
    rows = CheckList(fold_passed=False)
    qtbot.addWidget(rows)
    try:
        for lang, word in (("en", "Problem"), ("zh", "问题")):
            assert i18n.apply_language(lang)
            rows.set_checks([_row_with_fix()])
            assert rows.rows[0][0].toolTip() == word
    finally:
        i18n.apply_language("en")
