"""The CLI's one problem renderer: a check, a user error, a chat error and a diagnosis print the same lines."""

from __future__ import annotations

import pytest

from app.cli._output import print_check, print_next_step, problem_lines, report_user_error
from app.core.problem import Check, Status, UserError
from app.core.text import T
from tests.problem_samples import EVIDENCE, MESSAGE, NEXT_STEP, four_kinds


@pytest.mark.parametrize("kind", sorted(four_kinds()))
def test_each_kind_renders_the_same_lines(kind):
    lines = problem_lines(four_kinds()[kind], lead="error: ", step="next step: ", evidence=20)
    assert lines == [f"error: {MESSAGE.render('en')}", f"next step: {NEXT_STEP.render('en')}",
                     *(f"  | {line}" for line in EVIDENCE)]


def test_the_renderer_leaves_out_what_the_caller_asks_and_what_is_missing():
    problem = four_kinds()["check"]
    assert problem_lines(problem, lead=None, step="-> ") == [f"-> {NEXT_STEP.render('en')}"]
    assert problem_lines(problem, evidence=1) == [MESSAGE.render("en"), f"  | {EVIDENCE[-1]}"]
    bare = UserError(MESSAGE)
    assert problem_lines(bare, lead="error: ", step="next step: ", evidence=20) == [f"error: {MESSAGE.render('en')}"]


def test_a_user_error_goes_to_stderr_as_before(capsys):
    assert report_user_error(four_kinds()["user_error"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [f"error: {MESSAGE.render('en')}", f"next step: {NEXT_STEP.render('en')}",
                                *(f"  | {line}" for line in EVIDENCE)]


def test_only_the_last_twenty_evidence_lines_are_printed(capsys):
    report_user_error(UserError(MESSAGE, NEXT_STEP, [f"line {n}" for n in range(30)]))
    err = capsys.readouterr().err
    assert "  | line 10" in err and "  | line 9\n" not in err and err.count("  | ") == 20


def test_a_check_row_shows_its_next_step_unless_it_passed(capsys):
    print_check(four_kinds()["check"])
    print_check(Check("magic", Status.OK, T("The file is a GGUF.", "该文件是 GGUF。"), NEXT_STEP))
    assert capsys.readouterr().out.splitlines() == [
        f"[FAIL] {MESSAGE.render('en')}", f"       -> {NEXT_STEP.render('en')}", "[ok  ] The file is a GGUF."]


def test_a_diagnosis_next_step_under_the_sentence(capsys):
    print_next_step(four_kinds()["diagnosis"])
    print_next_step(UserError(MESSAGE, T("", "")))  # nothing to say: no line
    assert capsys.readouterr().out == f"  next step: {NEXT_STEP.render('en')}\n"
