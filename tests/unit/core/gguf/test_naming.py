"""A model's file type and its own name field, as the window says them to a newcomer."""

from __future__ import annotations

import pytest

from app.core.gguf.naming import file_type_text, own_name_note


@pytest.mark.parametrize(("name", "english", "chinese"), [
    ("MOSTLY_Q4_1", "4-bit (Q4_1)", "4 位（Q4_1）"),
    ("MOSTLY_Q4_K_M", "4-bit (Q4_K_M)", "4 位（Q4_K_M）"),
    ("MOSTLY_IQ2_XXS", "2-bit (IQ2_XXS)", "2 位（IQ2_XXS）"),
    ("ALL_F32", "32-bit, not quantized (F32)", "32 位，未量化（F32）"),
    ("MOSTLY_BF16", "16-bit, not quantized (BF16)", "16 位，未量化（BF16）"),
    ("MOSTLY_TQ1_0", "ternary (TQ1_0)", "三值（TQ1_0）"),
    ("Q6_K", "6-bit (Q6_K)", "6 位（Q6_K）"),  # a tensor type (the commonest one, when the header names none)
])
def test_file_types_in_plain_words_with_their_exact_name(name, english, chinese):
    text = file_type_text(name)
    assert (text.render("en"), text.render("zh")) == (english, chinese)
    assert "MOSTLY" not in english and "ALL_" not in english


def test_nothing_to_say_for_no_type_or_a_guess():
    assert file_type_text(None) is None and file_type_text("GUESSED") is None


def test_the_files_own_name_is_told_only_when_the_file_name_does_not_say_it():
    note = own_name_note("SmolLM2-135M-Instruct.Q4_1.gguf", "Smollm2 135M 8k Lc100K Mix1 Ep2")
    assert note.render("en") == ("The file calls itself “Smollm2 135M 8k Lc100K Mix1 Ep2” (its own name field); the "
                                 "app names models by their file name.")
    assert note.render("zh") == "该文件内部的名称字段写的是“Smollm2 135M 8k Lc100K Mix1 Ep2”；本应用以文件名称呼模型。"
    assert own_name_note("SmolLM2-135M-Instruct.Q4_1.gguf", "SmolLM2 135M Instruct") is None
    assert own_name_note("model.gguf", None) is None and own_name_note("model.gguf", "  ") is None
