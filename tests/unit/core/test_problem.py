"""The one problem shape: checks, user errors, chat errors and diagnoses carry message / next_step / evidence /
action under the same names, the fix is a typed FixAction, and the JSON the CLI prints keeps its keys."""

from __future__ import annotations

import dataclasses
import json

import pytest

from app.core.chat import errors
from app.core.demo.errors import OFFLINE, offline
from app.core.diagnosis.value import Diagnosis, fix_from_dict, fix_to_dict
from app.core.engine import report
from app.core.problem import Check, Fix, FixAction, Problem, Status, UserError, change_settings, fix_action
from app.core.text import T
from tests.problem_samples import ACTION, EVIDENCE, MESSAGE, NEXT_STEP, four_kinds


@pytest.mark.parametrize("kind", sorted(four_kinds()))
def test_each_kind_is_a_problem_with_the_same_four_fields(kind):
    problem = four_kinds()[kind]
    assert isinstance(problem, Problem)
    assert (problem.message, problem.next_step, problem.evidence, problem.action) == (
        MESSAGE, NEXT_STEP, EVIDENCE, ACTION)
    assert isinstance(problem.evidence, tuple)


def test_no_kind_keeps_the_old_field_names():
    for problem in four_kinds().values():
        for old in ("fix", "fix_hint", "fix_action"):
            assert not hasattr(problem, old), (type(problem).__name__, old)


def test_a_fix_action_is_a_kind_and_its_data():
    action = fix_action(Fix.WAIT_LONGER, read_timeout_s=240.0)
    assert action == FixAction(Fix.WAIT_LONGER, {"read_timeout_s": 240.0})
    assert action.get("read_timeout_s") == 240.0 and action.get("missing", "-") == "-"
    assert action.to_dict() == {"action": "wait_longer", "read_timeout_s": 240.0}
    assert action.changes == {}, "only a settings fix changes settings"
    assert change_settings({"ctx": 2048}).changes == {"ctx": 2048}
    assert change_settings({}) is None, "nothing to change: no fix button"
    with pytest.raises(dataclasses.FrozenInstanceError):
        action.kind = Fix.REDOWNLOAD


def test_user_error_evidence_is_a_tuple_and_action_is_keyword_only():
    error = UserError(T("a", "a"), None, ["one", "two"])
    assert error.evidence == ("one", "two") and error.action is None
    fetch = offline(["Connection refused"])  # a subclass whose own field follows the shared ones positionally
    assert fetch.kind == OFFLINE and fetch.evidence == ("Connection refused",) and fetch.next_step is not None


def test_check_json_keeps_its_keys():
    row = report.illegal_instruction_row("llama-server")
    data = json.loads(json.dumps(row.to_dict("en")))
    assert set(data) == {"id", "status", "message", "fix", "evidence", "fix_action"}
    assert data["fix"] == row.next_step.render("en")
    assert data["fix_action"] == {"action": "switch_engine", "engine": "embedded"}
    assert Check("x", Status.OK, MESSAGE).to_dict()["fix_action"] is None


def test_diagnosis_json_keeps_its_fix_shape():
    rebuild = fix_from_dict({"rebuild_engine": "embedded"})
    assert rebuild == FixAction(Fix.REBUILD_ENGINE, {"engine": "embedded"})
    assert fix_to_dict(rebuild) == {"rebuild_engine": "embedded"}
    assert fix_from_dict({"ctx": 4096, "parallel": 1}) == change_settings({"ctx": 4096, "parallel": 1})
    assert fix_from_dict({}) is None and fix_to_dict(None) == {}
    data = four_kinds()["diagnosis"].to_dict("zh")
    assert data["fix"] == {"port": 0} and data["fix_hint"] == NEXT_STEP.render("zh")
    assert data["evidence"] == list(EVIDENCE)


def test_chat_error_json_keeps_its_fix_action_shape():
    slow = errors.too_slow("req-1", 120.0)
    assert slow.action.kind is Fix.WAIT_LONGER
    assert slow.to_dict("en")["fix_action"] == {"action": "wait_longer", "read_timeout_s": 240.0}
    crash = errors.server_crashed("req-2", four_kinds()["diagnosis"])
    data = crash.to_dict("en")
    assert data["fix_action"] == {"port": 0}, "a crash's fix keeps its diagnosis' shape"
    assert data["next_step"] == NEXT_STEP.render("en") and data["diagnosis"]["cause"] == "port_in_use"


def test_a_crash_in_chat_takes_the_diagnosis_fields_or_says_it_plainly():
    diagnosis = four_kinds()["diagnosis"]
    crash = errors.server_crashed("req", diagnosis, ("ConnectionResetError: reset",))
    assert (crash.message, crash.next_step, crash.action) == (diagnosis.message, diagnosis.next_step, diagnosis.action)
    unknown = errors.server_crashed("req", None)
    assert unknown.action is None and unknown.diagnosis is None and "stopped" in unknown.message.render("en")
    assert "已保留" in unknown.next_step.render("zh")


def test_the_diagnosis_sentence_and_next_step_render_together():
    diagnosis = Diagnosis(cause="unknown", message=MESSAGE, next_step=NEXT_STEP)
    assert diagnosis.render("en") == f"{MESSAGE.render('en')} {NEXT_STEP.render('en')}"
    assert diagnosis.render("zh") == MESSAGE.render("zh") + NEXT_STEP.render("zh")
    assert diagnosis.action is None and diagnosis.to_dict()["fix"] == {}
