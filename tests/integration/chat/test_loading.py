"""HTTP 503 while llama-server loads the model: the chat waits with a bounded backoff and then answers.

A 150k-token vocabulary keeps a real llama-server in its "Loading model" phase for about a second
after its HTTP port opens, long enough to send a message into it."""

from __future__ import annotations

import socket
import time

import httpx

from app.core.chat.client import ChatClient
from app.core.chat.params import ChatParams
from app.core.chat.session import DONE, WAITING, ChatSession
from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama
from tests.integration.chat.test_harness import LLAMA_SERVER, spawn


def wait_for_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.005)
    raise AssertionError(f"port {port} never opened")


def test_message_sent_while_llama_server_loads_waits_then_is_answered(llama_server_bin, tmp_path):
    model = write_tiny_llama(tmp_path / "big-vocab.gguf", TinyModelSpec(n_extra_tokens=150_000, name="big-vocab"))
    server = spawn(LLAMA_SERVER, model, 512, tmp_path, llama_server_bin)
    client = ChatClient(server.url, connect_timeout=5)
    try:
        wait_for_port(server.port)
        assert httpx.get(server.url + "/health", timeout=5).status_code == 503  # really still loading
        session = ChatSession(client, params=ChatParams(seed=1, max_tokens=4), save=False)
        events = list(session.send("Are you there?"))
        kinds = [e.kind for e in events]
        assert kinds[0] == WAITING and "still loading" in events[0].notice.render("en")
        assert kinds[-1] == DONE, [e.error.to_dict() for e in events if e.error]
        assert session.conversation.messages[-1].status == "complete"
    finally:
        client.close()
        server.stop()
