"""Connect to a server: the dialog shows what the server said about itself, or its refusal in words."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QDialogButtonBox

from app.ui.chat.connect_dialog import ConnectDialog
from tests.unit.core.remote.test_detect import OLLAMA_ROUTES, serve

LONG = 30_000


def test_a_server_is_checked_and_chosen(qtbot):
    server = serve(OLLAMA_ROUTES, key="secret")
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        dialog = ConnectDialog(url=url)
        qtbot.addWidget(dialog)
        ok = dialog.buttons.button(QDialogButtonBox.Ok)
        dialog.check()
        qtbot.waitUntil(lambda: dialog.check_button.isEnabled(), timeout=LONG)
        assert "wants an API key" in dialog.answer.text() and not ok.isEnabled()
        dialog.key.setText("secret")
        dialog.check()
        qtbot.waitUntil(lambda: ok.isEnabled(), timeout=LONG)
        assert "Ollama" in dialog.answer.text() and "4096 tokens" in dialog.answer.text()
        with qtbot.waitSignal(dialog.connected) as chosen:
            ok.click()
        assert chosen.args[0].model == "qwen3:0.6b" and chosen.args[0].api_key == "secret"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_the_chat_pane_chats_with_a_keyed_remote_llama_server(qtbot, tiny_model, llama_server_bin):
    from app.core.launch.config import LaunchConfig
    from app.core.launch.ports import find_free_port
    from app.core.remote import connect
    from app.core.server.supervisor import State, Supervisor
    from app.ui.chat.chat_pane import ChatPane

    supervisor = Supervisor(LaunchConfig(model=str(tiny_model), backend="llama-server", server_bin=llama_server_bin,
                                         ctx=512, threads=1, port=find_free_port(), api_key="kpane"),
                            auto_restart=False)
    supervisor.start()
    try:
        assert supervisor.wait_for({State.READY, State.FAILED}, 60) is State.READY
        pane = ChatPane()
        qtbot.addWidget(pane)
        pane.use_remote(connect(supervisor.url, "kpane"))
        with qtbot.waitSignal(pane.replyFinished, timeout=LONG) as done:
            assert pane.send("Hello")
        assert done.args[0] is not None and pane.session.client.ctx_per_slot == 512
        pane.set_server_state(State.STOPPED)  # the local server's states do not stop the remote chat
        assert pane.server_state is State.READY
        qtbot.waitUntil(lambda: not pane.is_streaming(), timeout=LONG)
        pane.shutdown()
    finally:
        supervisor.close()
