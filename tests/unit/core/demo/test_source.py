"""The demo model's label reads in one language: the copy made here is described in Chinese too."""

from __future__ import annotations

from app.core.demo.source import SMOLLM2, real_label


def test_the_copys_label_is_chinese_in_chinese():
    label = real_label(SMOLLM2, copy=True)
    assert "SmolLM2-135M-Instruct (F16, made here from the Q4_1 file)" in label.render("en")
    zh = label.render("zh")
    assert "SmolLM2-135M-Instruct（F16，由 Q4_1 文件在本机生成）" in zh
    assert "made here" not in zh and "file" not in zh


def test_the_downloads_label_names_it_as_published():
    assert "SmolLM2-135M-Instruct (Q4_1)" in real_label(SMOLLM2).render("zh")
