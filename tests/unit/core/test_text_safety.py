"""inert(): what a terminal would obey is dropped, what a reader needs stays."""

from __future__ import annotations

from app.core.text import T
from app.core.text_safety import inert


def test_escape_sequences_controls_and_bidi_are_dropped():
    hostile = "\x1b]0;title\x07\x1b[2J\x1b[31mred\x1b[0m\x1bP1$r\x1b\\ok\x9b2J\x00\x7f\u202eevil\u2066"
    assert inert(hostile) == "redok2Jevil"


def test_a_name_stays_on_its_line_and_multiline_text_keeps_its_lines():
    assert inert("a\nb\tc\rd") == "a b c d"
    assert inert("a\nb\tc\rd", one_line=False) == "a\nb\tcd"
    assert inert("模型 名字 — ok, 100 %") == "模型 名字 — ok, 100 %"


def test_a_sentence_keeps_its_own_lines_but_not_its_params():
    sentence = T("File {path}\nnext step: check it", "文件 {path}\n下一步：检查", path="x\x1b[2J\nnext step: rm")
    assert sentence.render("en") == "File x next step: rm\nnext step: check it"
