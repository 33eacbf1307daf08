"""A full context and the answer's maximum length are told apart on real servers (issue 22: an answer stopped by a
full 2048-token context read "The answer was cut at max tokens (512)").

Both servers end either with finish_reason "length": llama-server stops a slot at its n_ctx, llama-cpp-python
shortens max_tokens to what the context has left. The random-weight model is kept from end-of-text, so it writes
until one of the two limits stops it."""

from __future__ import annotations

import pytest

from app.core.chat.client import ChatClient
from app.core.chat.params import FINISH_CONTEXT_FULL, FINISH_LENGTH, ChatParams
from app.core.chat.session import DONE, ChatSession
from tests.integration.chat.test_harness import ASCII_ONLY, EMBEDDED, LLAMA_SERVER, start_server

CTX = 256


@pytest.fixture(scope="module")
def servers(request, tiny_model, tmp_path_factory):
    directory = tmp_path_factory.mktemp("context-full")
    running = {EMBEDDED: start_server(EMBEDDED, tiny_model, CTX, directory),
               LLAMA_SERVER: start_server(LLAMA_SERVER, tiny_model, CTX, directory,
                                          request.getfixturevalue("llama_server_bin"))}
    yield running
    for server in running.values():
        server.stop()


def _answer(session: ChatSession, text: str):
    events = list(session.send(text))
    done = [e for e in events if e.kind == DONE]
    assert done, [e.error.to_dict() for e in events if e.error]
    return done[0].stats


def test_embedded_a_context_that_runs_out_is_not_called_max_tokens(servers):
    # told 2048 (what the chat believed in issue 22 after the restart); the server runs 256
    client = ChatClient(servers[EMBEDDED].url, backend=EMBEDDED, ctx_per_slot=2048)
    try:
        session = ChatSession(client, params=ChatParams(seed=1, max_tokens=400, extra=ASCII_ONLY), save=False)
        stats = _answer(session, "Tell me a long story.")
        assert stats.finish_reason == FINISH_CONTEXT_FULL, stats
        assert stats.completion_tokens < 400 and CTX - 8 <= stats.context_used <= CTX + 8, stats
        text = stats.finish_text().render("en")
        assert text.startswith("The answer stopped because the model's context is full.") and "max tokens" not in text

        short = ChatSession(client, params=ChatParams(seed=1, max_tokens=8, extra=ASCII_ONLY), save=False)
        stats = _answer(short, "Tell me a long story.")
        assert stats.finish_reason == FINISH_LENGTH and stats.completion_tokens >= 8 - 2, stats
        assert stats.finish_text().render("en").startswith("The answer was cut at max tokens (8)")
    finally:
        client.close()


def test_llama_server_stops_at_its_context_and_says_how_many_tokens_it_counted(servers):
    client = ChatClient(servers[LLAMA_SERVER].url, backend=LLAMA_SERVER)
    try:
        messages = [{"role": "user", "content": "Tell me a long story."}]
        reply = client.stream(messages, ChatParams(seed=1, extra=ASCII_ONLY), max_tokens=400)
        "".join(reply)
        stats = reply.stats
        assert stats.finish_reason == FINISH_LENGTH and stats.tokens_source == "server", stats
        assert stats.completion_tokens < 400 and stats.prompt_tokens + stats.completion_tokens >= CTX - 2, stats
        stats.n_ctx = client.server_info().ctx_per_slot
        stats.attribute_length(stats.prompt_tokens, stats.completion_tokens, exact=True)  # as the session does
        assert stats.finish_reason == FINISH_CONTEXT_FULL
        assert f"context is full ({stats.context_used} of {CTX} tokens)" in stats.finish_text().render("en")

        reply = client.stream(messages, ChatParams(seed=1, extra=ASCII_ONLY), max_tokens=8)
        "".join(reply)
        stats = reply.stats
        stats.attribute_length(stats.prompt_tokens, stats.completion_tokens, exact=True)
        assert stats.finish_reason == FINISH_LENGTH and stats.completion_tokens == 8, stats
    finally:
        client.close()
