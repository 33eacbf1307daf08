"""A repository's file names grouped into models: quantization from the name, split shards as one model in order,
projectors apart, a split with a missing part flagged."""

from __future__ import annotations

import pytest

from app.core.hub.files import HubFile, group_models, quant_from_name


@pytest.mark.parametrize(("name", "quant"), [
    ("Qwen2.5-7B-Instruct-Q4_K_M.gguf", "Q4_K_M"), ("SmolLM2-135M-Instruct.Q4_1.gguf", "Q4_1"),
    ("gemma-3-270m-it-BF16.gguf", "BF16"), ("x-IQ4_XS.gguf", "IQ4_XS"), ("x-q8_0.gguf", "Q8_0"),
    ("Q8_0/m-Q8_0-00001-of-00003.gguf", "Q8_0"), ("m-UD-Q4_K_XL.gguf", "UD-Q4_K_XL"),
    ("gpt-oss-20b-MXFP4.gguf", "MXFP4"), ("model.gguf", None), ("Llama-3-8B.gguf", None),
])
def test_quant_from_name(name, quant):
    assert quant_from_name(name) == quant


def _f(path: str, size: int = 10) -> HubFile:
    return HubFile(path, size, "ab" * 32, f"http://hub/r/resolve/main/{path}")


def test_shards_become_one_model_in_order_and_projectors_stay_apart():
    files = [_f("README.md"), _f("m-Q8_0-00002-of-00002.gguf", 5), _f("m-Q8_0-00001-of-00002.gguf", 7),
             _f("m-Q4_K_M.gguf", 9), _f("mmproj-m-F16.gguf", 3), _f("notes.txt")]
    models, projectors = group_models("o/r", files)
    assert [m.name for m in models] == ["m-Q8_0.gguf", "m-Q4_K_M.gguf"]  # largest first
    split = models[0]
    assert split.is_split and split.complete and split.size == 12 and split.quant == "Q8_0"
    assert [p.path for p in split.parts] == ["m-Q8_0-00001-of-00002.gguf", "m-Q8_0-00002-of-00002.gguf"]
    assert [p.path for p in projectors] == ["mmproj-m-F16.gguf"]
    assert split.to_dict()["parts"][0]["sha256"] == "ab" * 32


def test_a_split_with_a_missing_part_is_incomplete():
    models, _ = group_models("o/r", [_f("big-00001-of-00003.gguf"), _f("big-00003-of-00003.gguf")])
    assert len(models) == 1 and models[0].expected_parts == 3 and not models[0].complete


def test_unknown_size_makes_the_total_unknown():
    models, _ = group_models("o/r", [HubFile("a-00001-of-00002.gguf", None, None, "u"),
                                     HubFile("a-00002-of-00002.gguf", 4, None, "u")])
    assert models[0].size is None
