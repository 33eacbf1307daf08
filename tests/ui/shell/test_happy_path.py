"""The whole newcomer path through the real window, against the default engine (the real llama-server the set-up
installed) on a generated GGUF quantized to Q4_K_M:

open model → checks green → plan shown → probe finds a context on CPU → start → ready → chat reply streams →
Stop mid-reply → kill the child → crash card with diagnosis → auto-restart → Restart button → close → no child.
"""

from __future__ import annotations

import os
import signal
import threading

import psutil
from PySide6.QtCore import Qt

from app.core.problem import Status
from app.ui.widgets.job_row import JobState
from tests.ui.conftest import LONG, open_and_wait, wait_for_plan
from tests.ui.own_port import use_a_port_of_its_own
from tests.ui.stall_meter import StallMeter

SERVER = 180_000  # ms for a model load / probe on 2 busy cores
STALL_LIMIT_MS = 250  # a blocking wait on the GUI thread shows as seconds (tests/ui/stall_meter.py)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _freeze_after_first_words(chat, server_pid: int) -> threading.Event:
    """Pause the server (SIGSTOP) as soon as the reply's first words reach the stream's worker thread, so the
    answer is certainly still unfinished when Stop is clicked, however late a loaded machine lets the GUI thread
    see them (without it, a GUI thread starved for the length of the reply clicked Stop on a finished one and got
    "length"). Runs on the worker thread, before it reads the next piece; the test sends SIGCONT after Stop."""
    frozen, received = threading.Event(), []

    def on_event(event) -> None:
        if event.kind == "delta" and not frozen.is_set():
            received.append(event.text)
            if len("".join(received)) >= 12:
                os.kill(server_pid, signal.SIGSTOP)
                frozen.set()

    chat._task._progress.connect(on_event, Qt.ConnectionType.DirectConnection)
    return frozen


def _click(qtbot, button) -> None:
    assert button.isEnabled(), button.text()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_happy_path_from_model_to_chat_to_crash_to_close(qtbot, window, make_model, quantized_models):
    # a larger vocabulary makes an early end-of-text token unlikely, so the reply is still streaming at Stop;
    # quantized to Q4_K_M by llama.cpp (rows of 256 so the K-quant kernels really run), as users' models are
    model = quantized_models(make_model("happy.gguf", n_layers=4, n_embd=256, n_ff=512, n_extra_tokens=16000,
                                        f16=True), "Q4_K_M")

    meter = StallMeter().__enter__()  # the GUI thread never waits on disk, processes or the network

    # Model: every check is a green row
    report = open_and_wait(qtbot, window, model)
    assert report.checks and all(c.status is Status.OK for c in report.checks), report.checks
    assert report.info.file_type_name == "MOSTLY_Q4_K_M"
    assert {icon.status for icon, _l, _b in window.model.checks.rows} == {"ok"}

    # Settings: the plan is shown as bars with a verdict
    panel = window.settings_panel
    plan = wait_for_plan(qtbot, window)
    assert plan.fits and "Fits in the memory" in panel.plan_text.text()
    assert panel.plan_bars.zones() and set(panel.plan_bars.zones()) <= {"green", "amber"}
    assert panel.config().backend == "llama-server"  # the default engine, nobody chose it
    assert " -c 4096 " in panel.command.text() and str(model) in panel.command.text()
    panel.ctx.setValue(1024)
    qtbot.waitUntil(lambda: panel.plan is not None and panel.plan.ctx == 1024 and panel.wait_idle(), timeout=LONG)
    use_a_port_of_its_own(qtbot, window)  # the restarts below keep the port: another test process may take 8080

    # Find safe settings: a real probe on the CPU, attempts listed, recommendation applied and remembered
    _click(qtbot, panel.probe.run_button)
    qtbot.waitUntil(lambda: panel.probe.result is not None or panel.probe.job.state is JobState.FAILED, timeout=SERVER)
    result = panel.probe.result
    assert result is not None, panel.probe.status.text()
    assert result.recommendation and result.recommendation.gpu_layers == 0
    assert 256 <= result.recommendation.ctx <= 1024
    assert panel.probe.attempts.count() == len(result.attempts) >= 1
    assert panel.ctx.value() == result.recommendation.ctx
    assert "Safe settings, measured" in panel.probe.status.text()
    qtbot.waitUntil(lambda: window.store.settings.profile(model)["probe"] is not None, timeout=LONG)
    assert window.store.settings.profile(model)["probe"]["saved_at"] == result.saved_at is not None  # the cache's
    # the same question again is answered from the cache, and says so
    _click(qtbot, panel.probe.run_button)
    qtbot.waitUntil(lambda: panel.probe.result is not None and panel.probe.result is not result, timeout=SERVER)
    assert panel.probe.result.cached and "Cached result" in panel.probe.status.text()
    assert panel.probe.result.recommendation == result.recommendation

    # Start → ready, logs flowing
    qtbot.waitUntil(lambda: window.chat_tab.pane is not None, timeout=LONG)
    chat = window.chat_tab.pane
    _click(qtbot, window.server.start_button)
    qtbot.waitUntil(lambda: window.server.state == "ready", timeout=SERVER)
    supervisor = window.bridge.supervisor
    first_pid = supervisor.pid
    assert first_pid and _alive(first_pid)
    assert window.server.url_value.text() != "—"
    qtbot.waitUntil(lambda: window.logs.shown_line_count() > 3, timeout=LONG)

    # Chat: the reply streams, Stop cuts it off mid-reply
    chat.params_box.max_tokens.setValue(panel.ctx.value() // 2)  # room for the prompt in the context
    assert chat.send("Hello! Please tell me a long story.")
    frozen = _freeze_after_first_words(chat, first_pid)
    try:
        qtbot.waitUntil(lambda: chat._reply_entry is not None and len(chat._reply_entry.content) >= 12,
                        timeout=SERVER)
        assert frozen.is_set() and chat.is_streaming()
        with qtbot.waitSignal(chat.replyFinished, timeout=LONG) as finished:
            _click(qtbot, chat.stop_button)
    finally:
        os.kill(first_pid, signal.SIGCONT)
    assert finished.args[0] is not None and finished.args[0].finish_reason == "stopped"
    assert finished.args[0].completion_tokens < chat.params_box.max_tokens.value()  # cut off, not finished
    qtbot.waitUntil(lambda: not chat.is_streaming(), timeout=LONG)

    # Kill the child: crash card with a diagnosis, then the automatic restart brings it back
    os.kill(first_pid, signal.SIGKILL)
    qtbot.waitUntil(lambda: window.server.crash_card.isVisible(), timeout=LONG)
    assert window.server.crash_card.problem.message.text()
    assert "SIGKILL" in window.server.crash_card.problem.detail.text() + str(supervisor.last_diagnosis)
    qtbot.waitUntil(lambda: window.server.state == "ready" and supervisor.pid not in (None, first_pid),
                    timeout=SERVER)
    assert supervisor.restart_count >= 1 and not _alive(first_pid)

    # Restart button: a new child, the old one gone
    second_pid = supervisor.pid
    _click(qtbot, window.server.restart_button)
    qtbot.waitUntil(lambda: window.server.state == "ready" and supervisor.pid not in (None, second_pid),
                    timeout=SERVER)
    assert not _alive(second_pid)

    meter.__exit__()
    print(f"worst event-loop stall during the path: {meter.worst_ms:.0f} ms, "
          f"{meter.worst_own_ms:.0f} ms of it the GUI thread's own")
    assert meter.worst_own_ms < STALL_LIMIT_MS  # machine load is excused, a busy or blocked GUI thread is not

    # Close the window: it stops the server first; no child is left behind
    last_pid = supervisor.pid
    window.close()
    qtbot.waitUntil(lambda: window._close_state == "done", timeout=SERVER)
    assert not window.isVisible()
    assert not _alive(last_pid)
    assert all(not _alive(p.pid) for p in psutil.Process().children(recursive=True)
               if "llama_cpp" in " ".join(_cmdline(p)))


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:
        return []
