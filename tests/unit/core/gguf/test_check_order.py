"""Failures first: a damaged file's checks lead with what failed, in the model's own terms before the byte layout,
and the line above them says what failed instead of how many passed."""

from __future__ import annotations

from pathlib import Path

from app.core.gguf.check_order import failed_summary, failures_first
from app.core.gguf.validate import validate
from app.core.problem import Check, Status
from app.core.synthetic.tiny_llama import write_tiny_llama
from app.core.text import T
from tests.integration.gguf.loader_agreement.gguf_edit import GGUFFile


def layer_lacking_a_part(folder: Path) -> Path:
    """A tiny llama whose layer 1 lost its attention key weights from the tensor list (its bytes stay), as a
    broken writer or editor leaves it: the later parts' offsets no longer follow one another either."""
    source = write_tiny_llama(folder / "tiny.gguf")
    model = GGUFFile.parse(source.read_bytes())
    model.tensors = [t for t in model.tensors if t.name != b"blk.1.attn_k.weight"]
    target = folder / "layer-1-lacks-a-part.gguf"
    target.write_bytes(model.to_bytes())
    return target


def test_the_plain_failure_comes_first_then_the_layout_one_then_the_rest(tmp_path):
    report = validate(layer_lacking_a_part(tmp_path))
    ordered = failures_first(report.checks)
    errors = [c for c in ordered if c.is_error]
    assert [c.id for c in errors][:1] == ["layers"] and "tensor_offsets" in [c.id for c in errors]
    assert ordered[:len(errors)] == errors  # every failure before any passed row
    assert errors[0].message.render("en") == ("This file is damaged: layer 1 lacks a part every other layer has "
                                              "(attention key).")
    offsets = next(c for c in errors if c.id == "tensor_offsets").message.render("en")
    assert offsets.startswith("This file is damaged: its parts are not stored one right after another")
    assert offsets.index("(tensor '") > offsets.index("as llama.cpp requires")  # the jargon comes second


def test_the_summary_says_what_failed(tmp_path):
    report = validate(layer_lacking_a_part(tmp_path))
    passed = sum(1 for c in report.checks if c.status is Status.OK)
    failed = sum(1 for c in report.checks if c.is_error)
    summary = failed_summary(report.checks)
    assert summary.render("en") == (f"{failed} of {len(report.checks)} checks failed (the model's parts, the data "
                                    f"layout); {passed} passed.")
    assert summary.render("zh").startswith(f"{len(report.checks)} 项检查中有 {failed} 项未通过"
                                           "（模型的组成部分、数据布局）")


def test_a_list_without_failures_keeps_its_order_and_has_no_failure_summary(tiny_model):
    checks = validate(tiny_model).checks
    assert failures_first(checks) == checks and failed_summary(checks) is None
    warning = Check("chat_template", Status.WARNING, T("w", "w"))
    assert failures_first([*checks, warning])[0] is warning  # a warning still comes before what passed
