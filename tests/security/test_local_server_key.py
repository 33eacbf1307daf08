"""The local server (no share) is protected from web pages by a key made for each server: a page's requests,
cross-origin or through a rebinding host name, get 401 from both engines; the key is never on the child's command
line; the served model is named by its file name; the app's own chat works; the keyless setting lets a request
through. Measured on the main before this change: every one of these requests got 200 (or the answer)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from app.core.chat.hooks import client_for_supervisor
from app.core.chat.params import ChatParams
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.server.supervisor import State, Supervisor

pytestmark = pytest.mark.slow

BACKENDS = ("embedded", "llama-server")
READY_S = 90.0
CHAT = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2}


@pytest.fixture
def local_server(request, tiny_model):
    started: list[Supervisor] = []

    def _start(backend: str, **changes) -> Supervisor:
        server_bin = request.getfixturevalue("llama_server_bin") if backend == "llama-server" else None
        config = LaunchConfig(model=str(tiny_model), backend=backend, server_bin=server_bin, ctx=256, threads=1,
                              port=find_free_port()).with_changes(**changes)
        supervisor = Supervisor(config, auto_restart=False)
        started.append(supervisor)
        supervisor.start()
        state = supervisor.wait_for({State.READY, State.FAILED}, READY_S)
        assert state is State.READY, f"{backend}: {state}; {supervisor.last_diagnosis}; {supervisor.tail(20)}"
        return supervisor

    yield _start
    for supervisor in started:
        supervisor.close()


def _chat(url: str, **options) -> httpx.Response:
    return httpx.post(f"{url}/v1/chat/completions", timeout=60, trust_env=False, **options)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_web_page_gets_401_and_the_apps_own_chat_works(local_server, backend):
    supervisor = local_server(backend)
    url, port = supervisor.url, supervisor.config.port
    evil = {"Origin": "http://evil.example"}
    answers = {
        "no key": _chat(url, json=CHAT),
        "cross-origin": _chat(url, json=CHAT, headers=evil),
        "rebinding host": _chat(url, json=CHAT, headers={"Host": f"evil.example:{port}", **evil}),
        "text/plain, no preflight": _chat(url, content=httpx.Request("POST", url, json=CHAT).content,
                                         headers={"Content-Type": "text/plain", **evil}),
        "wrong key": _chat(url, json=CHAT, headers={"Authorization": "Bearer not-the-key"}),
    }
    print(f"\n{backend}: what a page gets: " + ", ".join(f"{k} {r.status_code}" for k, r in answers.items()))
    assert {name: answer.status_code for name, answer in answers.items()} == dict.fromkeys(answers, 401)
    assert all("choices" not in answer.text for answer in answers.values())

    client = client_for_supervisor(supervisor)  # what the chat pane uses
    try:
        reply = client.complete([{"role": "user", "content": "Hi"}], ChatParams(max_tokens=2), 2)
    finally:
        client.close()
    assert reply.get("choices"), reply


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_key_is_not_on_the_command_line_and_the_model_is_named_by_its_file(local_server, backend, tiny_model):
    supervisor = local_server(backend)
    key = supervisor.api_key
    assert key and len(key) >= 32
    cmdline = Path(f"/proc/{supervisor.pid}/cmdline").read_bytes().decode(errors="replace")
    assert key not in cmdline and "--api" not in cmdline  # ps shows the command line to every user
    assert key not in supervisor.command_line and key not in str(supervisor.snapshot())

    models = httpx.get(f"{supervisor.url}/v1/models", headers={"Authorization": f"Bearer {key}"}, timeout=30,
                       trust_env=False)
    assert models.status_code == 200
    assert [m["id"] for m in models.json()["data"]] == [Path(tiny_model).name]
    assert str(Path(tiny_model).parent) not in models.text


def test_an_api_key_in_the_users_environment_does_not_lock_the_app_out(local_server, monkeypatch):
    monkeypatch.setenv("API_KEY", "left-over-from-a-shell")  # llama-cpp-python's server would take it
    supervisor = local_server("embedded", local_key=False)
    assert supervisor.api_key is None
    assert _chat(supervisor.url, json=CHAT).status_code == 200


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_keyless_setting_lets_programs_on_this_computer_in(local_server, backend):
    supervisor = local_server(backend, local_key=False)
    assert supervisor.api_key is None
    assert _chat(supervisor.url, json=CHAT).status_code == 200


def test_a_host_beyond_this_computer_gets_a_key_even_when_keyless_is_chosen(tiny_model):
    supervisor = Supervisor(LaunchConfig(model=str(tiny_model), host="0.0.0.0", local_key=False))
    try:
        assert supervisor.api_key  # known before the start: the chat and the share are made with it
    finally:
        supervisor.close()


def test_one_key_per_server_kept_across_its_restarts_and_new_settings(tiny_model):
    config = LaunchConfig(model=str(tiny_model))
    first, second = Supervisor(config), Supervisor(config)
    try:
        assert first.api_key != second.api_key
        key = first.api_key
        first.set_config(config.with_changes(ctx=1024))
        assert first.api_key == key  # the chat pane's client keeps working after Restart with other settings
        first.set_config(config.with_changes(api_key="mine"))
        assert first.api_key == "mine"  # a key the user chose is used as it is
    finally:
        first.close()
        second.close()



def test_the_chat_follows_the_key_when_the_keyless_choice_changes(local_server):
    supervisor = local_server("llama-server", local_key=False)
    client = client_for_supervisor(supervisor)  # made once, as the chat pane does
    try:
        assert client.complete([{"role": "user", "content": "Hi"}], ChatParams(max_tokens=2), 2).get("choices")
        supervisor.set_config(supervisor.config.with_changes(local_key=True))  # the Settings step, then Restart
        supervisor.restart()
        assert supervisor.wait_for({State.READY, State.FAILED}, READY_S) is State.READY
        assert supervisor.api_key and _chat(supervisor.url, json=CHAT).status_code == 401
        assert client.complete([{"role": "user", "content": "Hi"}], ChatParams(max_tokens=2), 2).get("choices")
    finally:
        client.close()


def test_the_share_follows_the_key_when_the_keyless_choice_changes(local_server):
    """The share reads the server's key per request: a Restart that turns the key on (or off) keeps it answering."""
    from app.core.server.lan_share import LanShare, ShareSettings

    supervisor = local_server("llama-server", local_key=False)
    share = LanShare(supervisor, ShareSettings(port=find_free_port()))
    share.start()
    shared = f"http://127.0.0.1:{share.proxy.bound_port}"
    keyed = {"Authorization": f"Bearer {share.settings.api_key}"}
    try:
        assert _chat(shared, json=CHAT, headers=keyed).status_code == 200
        supervisor.set_config(supervisor.config.with_changes(local_key=True))
        supervisor.restart()
        assert supervisor.wait_for({State.READY, State.FAILED}, READY_S) is State.READY
        assert supervisor.api_key and _chat(supervisor.url, json=CHAT).status_code == 401
        assert _chat(shared, json=CHAT, headers=keyed).status_code == 200  # was 401: the key taken at start
    finally:
        share.close()
