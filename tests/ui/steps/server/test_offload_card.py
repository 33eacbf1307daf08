"""The Server step says a short GPU offload while the server runs: the card's title says it runs, its sentence and
next step are core's, and the partial case's fix sets GPU layers to what really went to the card."""

from __future__ import annotations

import pytest

from app.core.diagnosis.offload import offload_diagnosis
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.server.events import State, StateChanged
from app.core.server.supervisor import Supervisor
from app.ui.steps.server.server_panel import ServerPanel
from app.ui.steps.server.supervisor_bridge import SupervisorBridge
from tests.paths import ROOT
from tests.ui.steps.server.wiring import wired_panel

PARTIAL = (ROOT / "tests" / "data" / "offload_logs" / "cuda_partial_offload.txt").read_text(encoding="utf-8")


def test_a_short_offload_is_a_card_over_a_running_server(qtbot):
    panel = ServerPanel()
    qtbot.addWidget(panel)
    diagnosis = offload_diagnosis(PARTIAL.splitlines(), asked=99)
    panel.set_state(State.LOADING)
    panel.show_diagnosis(diagnosis)  # what the bridge does with an "offload" event
    panel.set_state(State.READY, StateChanged(State.READY, 0, url="http://127.0.0.1:8080"))
    card = panel.crash_card
    assert card.isVisibleTo(panel)
    assert card.title.text() == "The server runs, but not on the graphics card as planned."
    assert card.problem.message.text() == diagnosis.message.render("en")
    assert "set GPU layers to 20" in card.problem.next_step.text()
    with qtbot.waitSignal(card.applyFixRequested) as applied:
        card.apply_button.click()
    assert applied.args == [{"gpu_layers": 20}]


@pytest.mark.slow  # starts a real server
def test_a_real_cpu_only_server_asked_for_every_layer_shows_the_card(qtbot, tiny_model, llama_server_bin):
    config = LaunchConfig(model=str(tiny_model), backend="llama-server", server_bin=llama_server_bin, ctx=512,
                          threads=1, gpu_layers=-1, port=find_free_port())
    supervisor = Supervisor(config)
    bridge = SupervisorBridge(supervisor)
    panel, _control = wired_panel(bridge)
    qtbot.addWidget(panel)
    try:
        panel.start_button.click()
        qtbot.waitUntil(lambda: panel.state is State.READY and panel.crash_card.isVisibleTo(panel), timeout=90_000)
        assert panel.crash_card.title.text() == "The server runs, but not on the graphics card as planned."
        assert panel.crash_card.problem.message.text().startswith("The engine put no")
        assert not panel.crash_card.apply_button.isVisibleTo(panel)  # no setting helps: the next step says what does
    finally:
        bridge.close()
        bridge.wait_for_actions()
        supervisor.close()
