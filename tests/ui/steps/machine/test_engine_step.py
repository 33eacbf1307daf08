"""The engine row of the Machine step and the crash card's "Rebuild the engine and restart".

Real pieces throughout: the real engine self-test of the built-in engine (and its cache file), a real embedded
server killed by a real SIGILL and the supervisor's real diagnosis. Only the compile itself is replaced, by a
slow rebuild step handed to the window's ServerControl (a real rebuild takes minutes and needs the network).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest
from PySide6.QtCore import Qt

from app.core.diagnosis import diagnose
from app.core.diagnosis.causes_runtime import REBUILD_ENGINE
from app.core.engine import isa_cache, report, selftest
from app.core.engine.rebuild import Phase, RebuildProgress, cannot_rebuild_reason
from app.core.engine.selftest import EngineCheck, Outcome, QuantResult
from app.core.engine.shipped import shipped_llama_server
from app.core.launch.config import LaunchConfig, fix_changes
from app.core.problem import Fix, FixAction, Status, UserError
from app.core.server.crash import engine_facts
from app.core.server.events import State, StateChanged
from app.core.text import T
from app.ui.steps.machine.machine_panel import MachinePanel
from app.ui.steps.server.server_panel import ServerPanel
from app.ui.widgets.job_row import JobState
from tests.ui.conftest import LONG, open_and_wait
from tests.ui.own_port import use_a_port_of_its_own

SERVER = 180_000  # ms: a model load on 2 busy cores


def _click(qtbot, button) -> None:
    assert button.isVisible() and button.isEnabled(), button.text()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def _row_texts(check_list) -> list[str]:
    return [label.text() for _icon, label, _button in check_list.rows]


def _row_button(check_list):
    return check_list.rows[0][2]


@pytest.fixture
def no_engine_check(app_home):
    """An app home where the engine has never been tested (the seeded real result removed)."""
    (app_home / "cache" / "engine-check.json").unlink(missing_ok=True)


@pytest.fixture
def sigill_engine_check(app_home):
    """A stored self-test of this very engine build on this processor whose first model died of SIGILL."""
    (app_home / "cache" / "engine-check.json").unlink(missing_ok=True)
    results = (QuantResult("Q4_0", Outcome.CRASHED, "killed by SIGILL"),
               QuantResult("Q4_1", Outcome.RUNS, "4 tokens in 0.05 s"))
    check = EngineCheck("embedded", selftest.build_fingerprint("embedded"), isa_cache.cpu_fingerprint(), results,
                        0.4, time.time())
    selftest.store(check)
    assert selftest.cached("embedded") == check
    return check


def slow_rebuild(progress, cancel, *, steps: int = 400, then=None):
    """A rebuild step that takes its time like the real one: probing, building N of M, testing; honours cancel."""
    progress(RebuildProgress(Phase.PROBING))
    for done in range(steps):
        if cancel():
            raise UserError(T("The engine rebuild was cancelled; the engine is unchanged.",
                              "已取消重新构建引擎；引擎没有改变。"),
                            T("Start the rebuild again when you have a few minutes.", "有几分钟空闲时再重新构建。"))
        progress(RebuildProgress(Phase.BUILDING, done, steps))
        time.sleep(0.05)
    progress(RebuildProgress(Phase.TESTING))
    return then() if then else selftest.run_embedded_check(use_cache=False)


def test_a_rebuild_fix_is_never_a_setting_change():
    assert fix_changes({REBUILD_ENGINE: "embedded"}) == {}  # never a setting, never the supervisor's config


# --- the Machine step's engine row ---------------------------------------------------------------------------


@pytest.mark.slow  # runs the real engine self-test
def test_machine_row_runs_the_real_engine_test_once_when_nothing_is_cached(qtbot, no_engine_check):
    panel = MachinePanel(live=False)
    qtbot.addWidget(panel)
    panel.show()
    panel.set_engine("embedded", None)
    qtbot.waitUntil(lambda: panel.engine_state == "testing", timeout=LONG)
    assert panel.engine_status.isVisible() and "Testing the engine" in panel.engine_status.text()
    assert not panel.engine_checks.isVisible()
    qtbot.waitUntil(lambda: panel.engine_state == "done", timeout=LONG)

    stored = selftest.cached("embedded")
    assert stored is not None and stored.ok, "the self-test ran and its real result was kept"
    expected = report.check_row(stored, "embedded")
    assert panel.engine_row.status is Status.OK
    assert _row_texts(panel.engine_checks) == [expected.message.render("en")]
    assert "Q4_K_M" in _row_texts(panel.engine_checks)[0]
    assert panel.engine_checks.isVisible() and not panel.engine_status.isVisible()
    assert _row_button(panel.engine_checks) is None  # an ok row has nothing to fix
    assert not panel.engine_checks.summary.isVisible()  # one row, no "All 1 checks passed" line

    ran_at = stored.checked_at
    panel.set_engine("embedded", None)  # the same engine again: nothing runs
    assert panel.engine_state == "done" and selftest.cached("embedded").checked_at == ran_at


def test_window_machine_step_shows_the_engine_result_and_follows_the_settings_engine(qtbot, window, tmp_path):
    machine = window.machine
    qtbot.waitUntil(lambda: machine.engine_state == "done", timeout=LONG)
    server = str(shipped_llama_server())  # the default engine: the llama-server the set-up installed
    stored = selftest.cached("llama-server", server)  # the seeded real self-test of it on this processor
    assert machine.engine == ("llama-server", None)
    assert machine.engine_row.status is Status.OK
    assert _row_texts(machine.engine_checks) == [
        report.check_row(stored, "llama-server", server).message.render("en")]

    # choosing a llama-server file that does not exist: the row says so and offers the built-in engine
    form = window.settings_panel.advanced
    form.backend.setCurrentIndex(1)
    form.server_bin.setText(str(tmp_path / "no-such-llama-server"))
    form.server_bin.editingFinished.emit()
    qtbot.waitUntil(lambda: machine.engine[0] == "llama-server" and machine.engine_state == "done"
                    and machine.engine_row is not None and machine.engine_row.status is Status.ERROR, timeout=LONG)
    assert "no-such-llama-server" in _row_texts(machine.engine_checks)[0]
    assert machine.engine_note.isVisible() and "--" not in machine.engine_note.text()  # no command-line flags
    assert "--" not in _row_texts(machine.engine_checks)[0]
    button = _row_button(machine.engine_checks)
    assert button is not None and button.text() == "Use the built-in engine"
    _click(qtbot, button)
    assert form.backend.currentIndex() == 0 and window.settings_panel.engine()[0] == "embedded"
    assert window.settings_panel.advanced_box.is_expanded()  # the user sees where it changed
    qtbot.waitUntil(lambda: machine.engine[0] == "embedded" and machine.engine_state == "done"
                    and machine.engine_row.status is Status.OK, timeout=LONG)


@pytest.mark.slow  # the rebuild runs the real engine self-test
def test_cached_sigill_result_shows_the_error_row_and_the_rebuild_fixes_it(qtbot, sigill_engine_check, built_in_engine,
                                                                          window):
    machine = window.machine
    qtbot.waitUntil(lambda: machine.engine_state == "done" and machine.engine_row is not None, timeout=LONG)
    row = machine.engine_row
    assert row.status is Status.ERROR and row.action.kind in (Fix.REBUILD_ENGINE, Fix.SWITCH_ENGINE)
    text = _row_texts(machine.engine_checks)[0]
    assert "Next step:" in text and "SIGILL" not in text
    assert "Q4_0: crashed" in machine.engine_checks.rows[0][1].toolTip()
    button = _row_button(machine.engine_checks)
    if cannot_rebuild_reason() is not None:  # no compiler here: the row offers the other engine instead
        assert button.text() == "Use the llama-server engine" and machine.engine_note.isVisible()
        return
    assert button.text() == "Rebuild the engine for this processor"

    window.control.rebuild_step = lambda progress, cancel: slow_rebuild(progress, cancel, steps=20)
    _click(qtbot, button)
    box = machine.rebuild_box
    qtbot.waitUntil(lambda: box.isVisible() and box.job.progress.isVisible() and box.job.cancel_button.isVisible(),
                    timeout=LONG)
    assert not _row_button(machine.engine_checks).isEnabled()  # one rebuild at a time
    # after the "rebuild" the real self-test ran again: its real result replaces the failing one
    qtbot.waitUntil(lambda: box.state is JobState.DONE and machine.engine_row.status is Status.OK, timeout=LONG)
    assert selftest.cached("embedded").ok
    assert "rebuilt" in box.job.status.text() and not box.job.progress.isVisible()


# --- the crash card -------------------------------------------------------------------------------------------


def test_crash_card_offers_the_rebuild_for_a_rebuild_diagnosis(qtbot):
    diagnosis = diagnose(-4, ["llama_model_loader: loaded meta data", "Illegal instruction"],
                         LaunchConfig(model="m.gguf", backend="embedded"), engine=engine_facts(-4))
    assert diagnosis.action == FixAction(Fix.REBUILD_ENGINE, {"engine": "embedded"}), (
        "the set-up built this engine: the fix is a rebuild")
    panel = ServerPanel()
    qtbot.addWidget(panel)
    panel.set_state("failed", StateChanged(State.FAILED, 0, diagnosis=diagnosis, reason="not_restartable"))
    card = panel.crash_card
    if cannot_rebuild_reason() is None:
        assert card.apply_button.text() == "Rebuild the engine and restart"
        assert not card.fix_changes.isVisibleTo(card)  # no "rebuild_engine: embedded" as a setting change
        with qtbot.waitSignal(panel.rebuildRequested, timeout=1_000):
            card.apply_button.click()
    assert "rebuild_engine" not in card.fix_changes.text()


def test_crash_card_offers_the_other_engine_where_no_rebuild_is_possible(qtbot, monkeypatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)  # an installed (frozen) app cannot compile
    diagnosis = diagnose(-4, ["Illegal instruction"], LaunchConfig(model="m.gguf", backend="embedded"),
                         engine=engine_facts(-4))
    panel = ServerPanel()
    qtbot.addWidget(panel)
    panel.show_diagnosis(diagnosis)
    card = panel.crash_card
    assert card.apply_button.text() == "Use the other engine and restart"
    assert "cannot rebuild" in card.fix_changes.text() and "llama-server" in card.fix_changes.text()
    with qtbot.waitSignal(panel.applyFixRequested, timeout=1_000) as blocker:
        card.apply_button.click()
    assert blocker.args == [{"backend": "llama-server"}]


@pytest.mark.slow  # starts a real server from the window
def test_sigill_crash_rebuild_shows_progress_cancels_then_restarts_the_server(qtbot, built_in_engine, window,
                                                                               tiny_model):
    if cannot_rebuild_reason() is not None:
        pytest.skip("this computer cannot rebuild the engine (no compiler): the card offers the other engine")
    open_and_wait(qtbot, window, tiny_model)
    qtbot.waitUntil(lambda: window.settings_panel.config() is not None, timeout=LONG)
    use_a_port_of_its_own(qtbot, window)  # the restart after the rebuild keeps the port: another test may take 8080
    server, card = window.server, window.server.crash_card
    _click(qtbot, server.start_button)
    qtbot.waitUntil(lambda: server.state == "ready", timeout=SERVER)
    supervisor = window.bridge.supervisor
    before = (supervisor.config.model, supervisor.config.ctx, supervisor.config.backend, supervisor.config.gpu_layers)

    os.kill(supervisor.pid, signal.SIGILL)  # the engine dies the way a wrongly built engine dies
    qtbot.waitUntil(lambda: server.state == "failed" and card.isVisible(), timeout=LONG)
    assert card.diagnosis.cause == "illegal_instruction"
    assert card.diagnosis.action == FixAction(Fix.REBUILD_ENGINE, {"engine": "embedded"})
    assert card.apply_button.text() == "Rebuild the engine and restart"
    restarts = supervisor.restart_count

    started = threading.Event()

    def fake_slow(progress, cancel):
        started.set()
        return slow_rebuild(progress, cancel, steps=2_000)

    window.control.rebuild_step = fake_slow
    _click(qtbot, card.apply_button)
    box = card.rebuild_box
    # the rebuild is a pool job: on 2 busy cores it may wait behind the window's other work (checks, plan)
    qtbot.waitUntil(started.is_set, timeout=SERVER)
    qtbot.waitUntil(lambda: box.isVisible() and box.job.progress.maximum() == 100 and box.job.progress.value() > 0,
                    timeout=LONG)  # determinate while building
    assert "%" in box.job.status.text() and box.job.cancel_button.isVisible()
    assert not card.apply_button.isEnabled() and not server.start_button.isEnabled()
    assert not server.restart_button.isEnabled()
    assert window.machine.rebuild_box.isVisible()  # the Machine step shows the same job

    _click(qtbot, box.job.cancel_button)
    qtbot.waitUntil(lambda: box.state is JobState.FAILED, timeout=LONG)
    assert started.is_set()
    text = box.job.status.text()
    assert "cancelled" in text and "Next step: Start the rebuild again" in text
    assert "UserError" not in text and "Traceback" not in text
    assert not box.job.progress.isVisible() and not box.job.cancel_button.isVisible()
    assert server.state == "failed" and supervisor.restart_count == restarts  # nothing restarted
    assert card.apply_button.isEnabled()

    # a rebuild that succeeds (busy while "testing" at the end), then the server restarts as it was
    window.control.rebuild_step = lambda progress, cancel: slow_rebuild(
        progress, cancel, steps=10, then=lambda: selftest.cached("embedded"))
    _click(qtbot, card.apply_button)
    qtbot.waitUntil(lambda: box.state is JobState.DONE, timeout=LONG)
    qtbot.waitUntil(lambda: server.state == "ready" and supervisor.restart_count == restarts + 1, timeout=SERVER)
    assert window.bridge.supervisor is supervisor
    after = (supervisor.config.model, supervisor.config.ctx, supervisor.config.backend, supervisor.config.gpu_layers)
    assert after == before  # the same settings
    assert window.settings_panel.config().backend == "embedded"
