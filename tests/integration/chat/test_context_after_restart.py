"""After "Apply fix and restart" with a smaller context, the chat's client reads the context of the server that
runs now, on both engines (issue 22: the meter kept "of 4096" after a restart at 2048).

The real server is the witness: after the restart it refuses a prompt that the old context held, and says its
new context in that refusal."""

from __future__ import annotations

import pytest

from app.core.chat.classify import ContextOverflow
from app.core.chat.hooks import client_for_supervisor
from app.core.chat.params import ChatParams
from app.core.server.events import State
from tests.integration.chat.test_harness import BACKENDS

BEFORE, AFTER = 1024, 512
READY_S = 120.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_client_reads_the_smaller_context_after_a_fix_is_applied(running_server, backend):
    supervisor = running_server(backend, ctx=BEFORE)
    client = client_for_supervisor(supervisor)
    try:
        assert client.server_info().ctx_per_slot == BEFORE
        middle = [{"role": "user", "content": _text_of(client, 700)}]  # fits 1024, not 512
        list(client.stream(middle, ChatParams(max_tokens=1)))  # the old server takes it

        supervisor.apply_fix_and_restart({"ctx": AFTER})
        assert supervisor.wait_for({State.READY, State.FAILED}, READY_S) is State.READY
        client.forget_server()  # what the chat pane does on every Ready
        assert client.server_info().ctx_per_slot == AFTER

        with pytest.raises(ContextOverflow) as refused:  # the new server really has the smaller context
            list(client.stream(middle, ChatParams(max_tokens=1)))
        assert refused.value.n_ctx == AFTER
    finally:
        client.close()


def _text_of(client, tokens: int) -> str:
    """A text of about ``tokens`` tokens as this server counts them."""
    piece = "word "
    per_piece = len(client.tokenize(piece * 100)) / 100
    return piece * int(tokens / per_piece)
