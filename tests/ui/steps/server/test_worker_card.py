"""A worker gone mid-chat on the Server step's card: core's sentence, and the fix says which workers stay."""

from __future__ import annotations

import socket

import pytest

from app.core.diagnosis import diagnose
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.ui.steps.server.crash_card import CrashCard

LOST = "/src/ggml/src/ggml-rpc/ggml-rpc.cpp:569: Remote RPC server crashed or returned malformed response"


@pytest.mark.slow  # the busy worker's check waits its one-second timeout
def test_the_card_names_the_worker_and_the_fix_lists_the_workers_in_words(qtbot):
    with socket.socket() as busy:  # accepts and never answers: a worker serving someone else, still there
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        kept, gone = f"127.0.0.1:{busy.getsockname()[1]}", f"127.0.0.1:{find_free_port()}"  # nothing at the second
        config = LaunchConfig(model="/m/a.gguf", backend="llama-server", rpc_workers=(kept, gone))
        diagnosis = diagnose(-6, [LOST], config)
    card = CrashCard()
    qtbot.addWidget(card)
    card.set_diagnosis(diagnosis, config)
    assert card.problem.message.text() == f"The worker at {gone} stopped answering, so the model server stopped too."
    assert card.fix_changes.text() == f"The fix changes: Workers: {kept}, {gone} → {kept}"
    with qtbot.waitSignal(card.applyFixRequested) as applied:
        card.apply_button.click()
    assert applied.args == [{"rpc_workers": (kept,)}]
