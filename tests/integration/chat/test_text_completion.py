"""A base model (no chat template) through both real servers: the chat continues the transcript as a text on the
completion endpoint (llama-server's /completion, llama-cpp-python's /v1/completions), streams pieces with stats,
and a ChatSession calibrates, answers and saves as it does for a chat model."""

from __future__ import annotations

import httpx
import pytest

from app.core.chat.client import ChatClient
from app.core.chat.completion import TEXT, model_chat_mode
from app.core.chat.conversation import ANSWERED, COMPLETE
from app.core.chat.params import ChatParams
from app.core.chat.session import DELTA, DONE, ERROR, ChatSession
from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama
from tests.integration.chat.test_harness import ASCII_ONLY, BACKENDS, LLAMA_SERVER, start_server

NO_EOS = ASCII_ONLY


@pytest.fixture(scope="module", params=BACKENDS)
def server(request, tmp_path_factory):
    directory = tmp_path_factory.mktemp("text-completion")
    model = write_tiny_llama(directory / "base.gguf", TinyModelSpec(chat_template=False, name="tiny-base-llama"))
    server_bin = request.getfixturevalue("llama_server_bin") if request.param == LLAMA_SERVER else None
    running = start_server(request.param, model, 1024, directory, server_bin)
    running.model = model
    yield running
    running.stop()


@pytest.fixture
def client(server):
    client = ChatClient(server.url, backend=server.backend, ctx_per_slot=server.ctx, log_tail=server.log_tail,
                        mode=model_chat_mode(str(server.model)))
    yield client
    client.close()


def test_base_model_streams_a_continuation_from_the_completion_endpoint(server, client):
    assert client.mode == TEXT and client.text_completion
    reply = client.stream([{"role": "user", "content": "The river runs"}], ChatParams(seed=1, max_tokens=8,
                                                                                      extra=NO_EOS))
    pieces = list(reply)
    assert pieces and reply.text == "".join(pieces)
    assert reply.stats.finish_reason == "length" and reply.stats.cut_at_max_tokens
    assert 0 < reply.stats.ttft_s < reply.stats.total_s
    if server.backend == LLAMA_SERVER:
        assert reply.stats.tokens_source == "server" and reply.stats.completion_tokens == 8
        assert reply.stats.prompt_tokens and reply.stats.prompt_tokens >= 3
    else:
        assert 1 <= reply.stats.completion_tokens <= 8


def test_non_streamed_completion_reports_prompt_tokens(server, client):
    data = client.complete([{"role": "user", "content": "Once upon a time"}], ChatParams(seed=0), max_tokens=1)
    assert data["usage"]["prompt_tokens"] >= 4


def test_the_endpoint_is_the_completion_one(server):
    """The same body the client sends, by hand: the completion route answers, the chat route is not what we use."""
    path = "/completion" if server.backend == LLAMA_SERVER else "/v1/completions"
    length = "n_predict" if server.backend == LLAMA_SERVER else "max_tokens"
    done = httpx.post(server.url + path, json={"prompt": "Hello", length: 2, "seed": 1}, timeout=30)
    assert done.status_code == 200, done.text


def test_session_continues_the_text_and_saves_it(server, client, tmp_path):
    session = ChatSession(client, params=ChatParams(seed=2, max_tokens=6, extra=NO_EOS), directory=tmp_path)
    events = list(session.send("Once upon a time"))
    assert not [e for e in events if e.kind == ERROR], [e.error for e in events if e.kind == ERROR]
    assert any(e.kind == DELTA for e in events) and events[-1].kind == DONE
    user, answer = session.conversation.messages
    assert user.status == ANSWERED and answer.status == COMPLETE and answer.content
    events = list(session.send("And then"))  # the second turn continues the whole transcript
    assert events[-1].kind == DONE and len(session.conversation.messages) == 4
