"""The pre-flight rows: all green when everything is ready; each thing that can spoil a demo is its own row with
what to do, in both languages."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from app.core.launch.config import LaunchConfig
from app.core.presenter.preflight import PreflightInputs, battery_state, preflight_checks
from app.core.probe.result import Recommendation
from app.core.problem import Status
from app.core.server.events import State
from app.core.text import T

READY = PreflightInputs(model_usable=True, settings=LaunchConfig(model="m.gguf", ctx=2048, gpu_layers=10),
                        recommendation=Recommendation(gpu_layers=12, ctx=4096), engine_ok=True,
                        server_state=State.READY, answer_seconds=1.4, memory_fraction=0.4, battery=None, awake=True)
CJK = re.compile(r"[\u4e00-\u9fff]")


def _status(inputs: PreflightInputs) -> dict[str, Status]:
    return {check.id: check.status for check in preflight_checks(inputs)}


def test_everything_ready_is_all_green_in_the_order_a_presenter_reads():
    checks = preflight_checks(READY)
    assert [c.id for c in checks] == ["engine", "model", "measured", "server", "port", "answer", "memory", "power",
                                      "awake"]
    assert all(c.status is Status.OK for c in checks), [(c.id, c.message.render("en")) for c in checks]
    assert "1.4 s" in next(c for c in checks if c.id == "answer").message.render("en")


@pytest.mark.parametrize("change, row, status, words", [
    ({"engine_ok": None}, "engine", Status.ERROR, "Run the engine test"),
    ({"model_usable": False}, "model", Status.ERROR, "Open the model"),
    ({"recommendation": None}, "measured", Status.WARNING, "Find safe settings"),
    ({"recommendation": Recommendation(gpu_layers=12, ctx=1024)}, "measured", Status.WARNING, "not measured"),
    ({"server_state": State.STOPPED, "answer_seconds": None}, "server", Status.ERROR, "Start it now"),
    ({"server_state": State.STOPPED, "port_free": False, "answer_seconds": None}, "port", Status.WARNING,
     "pick another"),
    ({"answer_seconds": 25.0}, "answer", Status.WARNING, "took 25.0 s"),
    ({"answer_seconds": None, "answer_error": T("The server is not reachable.", "无法连接服务器。")}, "answer",
     Status.ERROR, "Restart the server"),
    ({"memory_fraction": 0.8}, "memory", Status.WARNING, "Close other programs"),
    ({"memory_fraction": 0.9}, "memory", Status.ERROR, "90 %"),
    ({"battery": (63.0, False)}, "power", Status.WARNING, "Plug in the charger"),
    ({"battery": (63.0, True)}, "power", Status.OK, "plugged in"),
    ({"awake": False, "awake_reason": T("No way to keep it awake here.", "无法保持常亮。")}, "awake", Status.WARNING,
     "No way"),
])
def test_each_problem_is_its_own_row(change, row, status, words):
    checks = {c.id: c for c in preflight_checks(replace(READY, **change))}
    check = checks[row]
    text = check.message.render("en") + " " + (check.next_step.render("en") if check.next_step else "")
    assert check.status is status and words in text, (check.status, text)
    assert CJK.search(check.message.render("zh"))
    others = [c for c in checks.values() if c.id != row and c.id not in ("server", "answer", "port")]
    assert all(c.status is Status.OK for c in others), [(c.id, c.status) for c in others]


def test_the_battery_is_read_or_absent():
    state = battery_state()
    assert state is None or (0 <= state[0] <= 100 and isinstance(state[1], bool))
