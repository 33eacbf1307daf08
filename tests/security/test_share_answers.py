"""What the share's answers give away, with both real engines behind it: the model's absolute path (the home folder,
so the user name) becomes its file name in every answer, streamed or not, and ``/health`` answers on both engines
(the built-in engine has none of its own: 404 through the share before)."""

from __future__ import annotations

import json

import httpx
import pytest

from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.server.lan_share import LanShare, ShareSettings
from app.core.server.supervisor import State, Supervisor
from app.core.synthetic.tiny_llama import write_tiny_llama

pytestmark = pytest.mark.slow
ENGINES = ["llama-server", "embedded"]
GETS = ["/v1/models", "/models", "/props", "/slots"]
POSTS = [("/v1/completions", {"prompt": "Hi", "max_tokens": 3}),
         ("/v1/chat/completions", {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3})]


@pytest.fixture(params=ENGINES)
def shared(request, tmp_path):
    folder = tmp_path / "Zoë's models"  # a non-ASCII folder: JSON may write it raw or as \u escapes
    folder.mkdir()
    model = write_tiny_llama(folder / "tiny.gguf")
    server_bin = request.getfixturevalue("llama_server_bin") if request.param == "llama-server" else None
    supervisor = Supervisor(LaunchConfig(model=str(model), backend=request.param, server_bin=server_bin, ctx=512,
                                         threads=1, port=find_free_port()), auto_restart=False)
    try:
        supervisor.start()
        assert supervisor.wait_for({State.READY, State.FAILED}, 60) is State.READY, supervisor.tail(20)
        share = LanShare(supervisor, ShareSettings(port=0))
        share.start()
        yield share.urls[0], share.settings.api_key, model
    finally:
        supervisor.close()


def _leaks(text: str, model) -> list[str]:
    forms = {str(model), json.dumps(str(model))[1:-1], str(model.parent), json.dumps(str(model.parent))[1:-1]}
    return sorted(form for form in forms if form in text)


def test_no_answer_carries_the_model_path(shared):
    url, key, model = shared
    seen = {}
    with httpx.Client(headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
        for path in GETS:
            seen[path] = client.get(url + path)
        for path, body in POSTS:
            seen[path] = client.post(url + path, json=body)
            seen[path + " streamed"] = client.post(url + path, json={**body, "stream": True})
    answered = {path: answer for path, answer in seen.items() if answer.status_code == 200}
    assert {"/v1/models", "/v1/completions", "/v1/chat/completions streamed"} <= set(answered), seen
    leaks = {path: _leaks(answer.text, model) for path, answer in seen.items() if _leaks(answer.text, model)}
    assert not leaks, leaks
    assert seen["/v1/models"].json()["data"][0]["id"] == "tiny.gguf"
    assert '"model": "tiny.gguf"' in seen["/v1/completions"].text.replace('":"', '": "')


def test_health_answers_on_both_engines(shared):
    url, _, _ = shared
    answer = httpx.get(url + "/health", timeout=30)
    assert answer.status_code == 200 and answer.json() == {"status": "ok"}, answer.text
    assert httpx.head(url + "/v1/health", timeout=30).status_code == 200
