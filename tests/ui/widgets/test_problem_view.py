"""The window's one problem renderer: a check, a user error, a chat error and a diagnosis show the same fields
the same way, in the check rows, the crash card and the ProblemView widget."""

from __future__ import annotations

import pytest

from app.core.problem import Fix, FixAction, fix_action
from app.core.text import current_language
from app.ui.steps.server.crash_card import CrashCard
from app.ui.widgets.check_list import CheckList
from app.ui.widgets.problem_view import ProblemView, evidence_text, fix_button_text, next_step_text, problem_text
from tests.problem_samples import EVIDENCE, MESSAGE, NEXT_STEP, four_kinds


def _en(text) -> str:
    return text.render(current_language())


@pytest.mark.parametrize("kind", sorted(four_kinds()))
def test_each_kind_renders_the_same_text(qapp, kind):
    problem = four_kinds()[kind]
    assert problem_text(problem) == f"{_en(MESSAGE)}\nNext step: {_en(NEXT_STEP)}"
    assert problem_text(problem, labelled=False, joiner=" ") == f"{_en(MESSAGE)} {_en(NEXT_STEP)}"
    assert next_step_text(problem, labelled=False) == _en(NEXT_STEP)
    assert evidence_text(problem) == "\n".join(EVIDENCE) and evidence_text(problem, last=1) == EVIDENCE[-1]


@pytest.mark.parametrize("kind", sorted(four_kinds()))
def test_each_kind_fills_the_problem_view_alike(qtbot, kind):
    view = ProblemView()
    qtbot.addWidget(view)
    view.show()
    view.set_problem(four_kinds()[kind], detail="exit code 1", evidence_title=lambda n: f"Log lines ({n})")
    assert view.message.text() == _en(MESSAGE) and view.next_step.text() == _en(NEXT_STEP)
    assert view.detail.text() == "exit code 1" and view.detail.isVisible()
    assert view.evidence_toggle.text() == f"Log lines ({len(EVIDENCE)})"
    assert not view.evidence.isVisible()
    view.evidence_toggle.click()
    assert view.evidence.isVisible() and view.evidence.toPlainText() == "\n".join(EVIDENCE)


def test_no_problem_shows_the_generic_sentence_and_nothing_else(qtbot):
    view = ProblemView()
    qtbot.addWidget(view)
    view.show()
    view.set_problem(None, generic="Something stopped.")
    assert view.message.text() == "Something stopped."
    assert not view.next_step.isVisible() and not view.detail.isVisible() and not view.evidence_toggle.isVisible()


def test_fix_buttons_are_named_by_the_action_kind(qapp):
    assert fix_button_text(fix_action(Fix.COPY_TO_SAFE_PATH, path="/x")) == "Copy to a safe folder"
    assert fix_button_text(fix_action(Fix.SWITCH_ENGINE, engine="llama-server")) == "Use the llama-server engine"
    assert fix_button_text(fix_action(Fix.SWITCH_ENGINE, engine="embedded")) == "Use the built-in engine"
    assert fix_button_text(FixAction(Fix.TEST_ENGINE)) == "Test the engine"
    assert fix_button_text(FixAction(Fix.DOWNLOAD_MISSING_SHARDS)) == ""  # the sentence says what to do
    assert fix_button_text(None) == ""


def test_a_check_row_is_the_same_text(qtbot):
    checks = CheckList(fold_passed=False)
    qtbot.addWidget(checks)
    check = four_kinds()["check"]
    checks.set_checks([check])
    _icon, label, button = checks.rows[0]
    assert label.text() == problem_text(check) and label.toolTip() == evidence_text(check)
    assert button is None, "a settings change is applied from the crash card, not from a check row"


def test_the_crash_card_shows_a_diagnosis_through_the_problem_view(qtbot):
    card = CrashCard()
    qtbot.addWidget(card)
    card.show()
    diagnosis = four_kinds()["diagnosis"]
    card.set_diagnosis(diagnosis, None)
    assert card.problem.problem is diagnosis
    assert card.problem.message.text() == _en(MESSAGE) and card.problem.next_step.text() == _en(NEXT_STEP)
    assert card.action() == ("apply", {"port": 0}) and card.apply_button.isVisible()
    assert "any free port" in card.fix_changes.text()
