"""The chat template check: a model without one is a base model that continues text; the Model step and
`gguf-launcher doctor` (text and --json) say so as a warning with a next step."""

from __future__ import annotations

import json

from app.cli import main
from app.core.gguf.validate import validate
from app.core.problem import Status

BASE_MESSAGE = "This is a base model: it continues text instead of answering."
BASE_NEXT = "Use it to continue a text, or pick an instruct/chat version of the model."


def test_a_model_with_a_template_passes(tiny_model):
    check = validate(tiny_model).check("chat_template")
    assert check is not None and check.status is Status.OK


def test_a_model_without_a_template_is_named_a_base_model(make_model):
    report = validate(make_model("base.gguf", chat_template=False))
    assert report.info is not None and not report.info.has_chat_template
    check = report.check("chat_template")
    assert check is not None and check.status is Status.WARNING
    assert check.message.render("en") == BASE_MESSAGE and check.next_step.render("en") == BASE_NEXT
    assert "基础模型" in check.message.render("zh")
    assert report.status is Status.WARNING and not report.has_errors
    assert [c.id for c in report.checks if c.status is not Status.OK] == ["chat_template"]


def test_doctor_json_carries_the_warning(capsys, make_model):
    code = main(["doctor", str(make_model("base.gguf", chat_template=False)), "--no-sha256", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0  # a warning, not a failure: the model loads and continues text
    check = next(c for c in doc["checks"] if c["id"] == "chat_template")
    assert check["status"] == "warning" and check["message"] == BASE_MESSAGE
    assert BASE_NEXT in json.dumps(check)


def test_doctor_text_says_it_in_both_languages(make_model, capsys):
    # In-process: the same `doctor` command line through app.cli.main (what `python -m app` calls); the child
    # process path itself is covered in tests/unit/cli/test_doctor.py. app_home resets the language afterwards.
    model = make_model("base.gguf", chat_template=False)
    for lang, sentence in (("en", BASE_MESSAGE), ("zh", "这是一个基础模型")):
        code = main(["--lang", lang, "doctor", str(model), "--no-sha256"])
        out, err = capsys.readouterr()
        assert code == 0, out + err
        assert sentence in out
