"""The chat's mode choice: a base model (no chat template) gets text completion on the server's completion
endpoint, with the transcript as one text; a chat model, or one nobody can read, chats as usual."""

from __future__ import annotations

from types import SimpleNamespace

from app.core.chat.client import BACKEND_EMBEDDED, BACKEND_LLAMA_SERVER, ChatClient, ServerInfo
from app.core.chat.completion import (
    CHAT,
    TEXT,
    TEXT_COMPLETION_NOTICE,
    chat_mode,
    completion_piece,
    completion_prompt,
    completion_request,
    completion_usage,
    model_chat_mode,
)
from app.core.chat.hooks import client_for_supervisor
from app.core.chat.params import ChatParams
from app.core.launch.config import LaunchConfig


def test_mode_follows_the_chat_template():
    assert chat_mode(False) == TEXT
    assert chat_mode(True) == CHAT and chat_mode(None) == CHAT


def test_mode_of_a_model_file(make_model, tmp_path):
    assert model_chat_mode(str(make_model("base.gguf", chat_template=False))) == TEXT
    assert model_chat_mode(str(make_model("chat.gguf"))) == CHAT
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a model")
    assert model_chat_mode(str(broken)) == CHAT and model_chat_mode(str(tmp_path / "gone.gguf")) == CHAT
    assert model_chat_mode(None) == CHAT


def test_client_for_a_supervised_base_model_continues_text(make_model):
    def supervisor(model):
        return SimpleNamespace(url="http://127.0.0.1:9", config=LaunchConfig(model=str(model)), tail=lambda n: [])

    base = client_for_supervisor(supervisor(make_model("base.gguf", chat_template=False)))
    chat = client_for_supervisor(supervisor(make_model("chat.gguf")))
    try:
        assert base.text_completion and base.mode == TEXT
        assert not chat.text_completion and chat.mode == CHAT
    finally:
        base.close()
        chat.close()


def test_the_transcript_becomes_one_text_to_continue():
    messages = [{"role": "system", "content": "A story."}, {"role": "user", "content": "Once upon"},
                {"role": "assistant", "content": " a time there was"}, {"role": "user", "content": "a river."}]
    assert completion_prompt(messages) == "A story.\nOnce upon a time there was\na river."


def test_each_server_gets_its_completion_endpoint():
    messages = [{"role": "user", "content": "The river"}]
    fields = ChatParams(seed=1).request_fields(7)
    path, body = completion_request(True, messages, fields, stream=True)
    assert path == "/completion" and body["prompt"] == "The river" and body["n_predict"] == 7
    assert "max_tokens" not in body and "messages" not in body and body["stream"] is True
    path, body = completion_request(False, messages, fields, stream=False)
    assert path == "/v1/completions" and body["max_tokens"] == 7 and body["prompt"] == "The river"


def test_client_picks_the_endpoint_by_mode_and_backend():
    messages = [{"role": "user", "content": "Hi"}]
    for backend, path in ((BACKEND_LLAMA_SERVER, "/completion"), (BACKEND_EMBEDDED, "/v1/completions")):
        client = ChatClient("http://127.0.0.1:9", backend=backend, mode=TEXT)
        client._info = ServerInfo(backend, 2048)
        assert client._endpoint(messages, {"max_tokens": 4}, stream=True)[0] == path
        client.close()
    chat = ChatClient("http://127.0.0.1:9", backend=BACKEND_LLAMA_SERVER)
    chat._info = ServerInfo(BACKEND_LLAMA_SERVER, 2048)
    assert chat._endpoint(messages, {"max_tokens": 4}, stream=True) == (
        "/v1/chat/completions", {"messages": messages, "stream": True, "max_tokens": 4})
    chat.close()


def test_chunks_and_usage_of_both_servers():
    assert completion_piece({"content": "ab", "stop": False}) == ("ab", None)
    assert completion_piece({"content": "", "stop": True, "stop_type": "limit"}) == ("", "length")
    assert completion_piece({"content": "", "stop": True, "stop_type": "eos"}) == ("", "stop")
    assert completion_piece({"choices": [{"text": "cd", "finish_reason": None}]}) == ("cd", None)
    assert completion_piece({"choices": [{"text": "", "finish_reason": "length"}]}) == ("", "length")
    assert completion_usage({"tokens_evaluated": 5, "tokens_predicted": 2}) == {"prompt_tokens": 5,
                                                                              "completion_tokens": 2}
    assert completion_usage({"usage": {"prompt_tokens": 3, "completion_tokens": 1}})["prompt_tokens"] == 3
    assert completion_usage({"content": "x"}) is None


def test_the_notice_is_one_line_in_both_languages():
    assert TEXT_COMPLETION_NOTICE.render("en") == "Text completion: this model continues what you write."
    assert "\n" not in TEXT_COMPLETION_NOTICE.render("zh") and TEXT_COMPLETION_NOTICE.render("zh")
