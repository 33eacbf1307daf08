"""The chat's meter and finish sentences follow the context of the server that runs now (issue 22: after a restart
at 2048 tokens the meter read "1982 of 4096 tokens used"), on both engines, through the real supervisor."""

from __future__ import annotations

import pytest
import shiboken6

from app.core.chat import ChatParams
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.server.events import State
from app.core.server.supervisor import Supervisor
from app.ui import workers
from app.ui.chat.chat_pane import ChatPane
from app.ui.steps.server.supervisor_bridge import SupervisorBridge
from tests.integration.chat.test_harness import ASCII_ONLY

SERVER_MS = 180_000  # a model load on 2 busy cores
BEFORE, AFTER = 1024, 512


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["embedded", "llama-server"])
def test_the_meter_measures_against_the_context_of_the_restarted_server(qtbot, request, tiny_model, backend):
    server_bin = request.getfixturevalue("llama_server_bin") if backend == "llama-server" else None
    config = LaunchConfig(model=str(tiny_model), backend=backend, server_bin=server_bin, ctx=BEFORE, threads=1,
                          port=find_free_port())
    supervisor = Supervisor(config, backoff_s=(0.2,))
    bridge = SupervisorBridge(supervisor)
    pane = ChatPane(bridge)
    try:
        bridge.start()
        qtbot.waitUntil(lambda: pane.server_state is State.READY, timeout=SERVER_MS)
        pane.params_box.set_params(ChatParams(seed=1, max_tokens=16, extra=ASCII_ONLY))
        with qtbot.waitSignal(pane.replyFinished, timeout=SERVER_MS) as first:
            assert pane.send("Hello there.")
        qtbot.waitUntil(lambda: not pane.is_streaming() and pane.meter.use is not None, timeout=SERVER_MS)
        used = pane.meter.use.used
        assert first.args[0].n_ctx == BEFORE
        assert pane.meter.summary.text() == f"{used} of {BEFORE} tokens used"

        bridge.apply_fix_and_restart({"ctx": AFTER})
        qtbot.waitUntil(lambda: pane.meter.use.ctx == AFTER, timeout=SERVER_MS)
        assert pane.server_state is State.READY
        assert pane.meter.summary.text() == f"{used} of {AFTER} tokens used"  # the same conversation, the new size

        with qtbot.waitSignal(pane.replyFinished, timeout=SERVER_MS) as second:
            assert pane.send("And again.")
        qtbot.waitUntil(lambda: not pane.is_streaming(), timeout=SERVER_MS)
        assert second.args[0].n_ctx == AFTER and second.args[0].finish_reason == "length"  # 16 tokens asked, 16 came
        assert pane.meter.use.ctx == AFTER
    finally:
        pane.stop()
        qtbot.waitUntil(lambda: not pane.is_streaming() and workers.active_count() == 0, timeout=SERVER_MS)
        bridge.close()
        supervisor.close()
        pane.shutdown()
        pane.deleteLater()
        qtbot.waitUntil(lambda: not shiboken6.isValid(pane), timeout=5_000)
