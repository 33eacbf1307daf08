"""A cut file's row in Chinese: no English phrase left in it (the English row keeps llama.cpp's own words)."""

from __future__ import annotations

from pathlib import Path

from app.core.gguf.checks import truncation_check
from app.core.gguf.reader import read_model_info


def test_a_cut_files_chinese_row_has_no_english_phrase(tmp_path, tiny_model):
    data = Path(tiny_model).read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[: len(data) // 2])
    check = truncation_check(read_model_info(str(cut)))
    assert "data is not within the file bounds" in check.message.render("en")  # the words a search finds
    chinese = check.message.render("zh")
    assert chinese.endswith("（llama.cpp 会报告：部分“blk.0.ffn_down.weight”的数据不在文件范围内。）"), chinese
    assert "data is not" not in chinese and "file bounds" not in chinese
