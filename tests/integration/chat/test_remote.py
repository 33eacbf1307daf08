"""Remote-server mode against a second real llama-server started with --api-key: its context is read from /props,
the self-test works with the key and fails in words without it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from app.core.chat import errors
from app.core.chat.session import DONE, ChatSession
from app.core.remote import LLAMA_SERVER, client_for_remote, connect
from tests.paths import ROOT

pytestmark = pytest.mark.slow
KEY = "k-remote-test-key"


@pytest.fixture(scope="module")
def keyed(tiny_model, llama_server_bin):
    from app.core.launch.config import LaunchConfig
    from app.core.launch.ports import find_free_port
    from app.core.server.supervisor import State, Supervisor

    config = LaunchConfig(model=str(tiny_model), backend="llama-server", server_bin=llama_server_bin, ctx=1024,
                          parallel=2, threads=1, port=find_free_port(), api_key=KEY)
    supervisor = Supervisor(config, auto_restart=False)
    supervisor.start()
    assert supervisor.wait_for({State.READY, State.FAILED}, 60) is State.READY, supervisor.tail(20)
    yield supervisor
    supervisor.close()


def test_the_context_is_read_from_props(keyed):
    remote = connect(keyed.url, KEY)
    assert remote.kind == LLAMA_SERVER and remote.ctx_source == "props"
    assert remote.ctx == 512 and remote.total_slots == 2  # 1024 tokens over 2 slots: what one request may use
    assert remote.models and remote.model == remote.models[0]
    client = client_for_remote(remote)
    try:
        events = list(ChatSession(client, save=False).send("Hello"))
    finally:
        client.close()
    assert events[-1].kind == DONE, [e.error.to_dict() for e in events if e.error]


def test_without_the_key_it_says_the_server_wants_one(keyed):
    with pytest.raises(errors.ChatError) as missing:
        connect(keyed.url)
    assert missing.value.message.render("en") == f"The server at {keyed.url} wants an API key."
    with pytest.raises(errors.ChatError) as wrong:
        connect(keyed.url, "not-the-key")
    assert wrong.value.message.render("en") == f"The server at {keyed.url} refused this API key."


def selftest(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", "selftest", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=180)


def test_selftest_url_with_the_key_passes(keyed):
    done = selftest("--url", keyed.url, "--api-key", KEY, "--rounds", "2", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["passed"] and report["ctx_per_slot"] == 512
    assert report["remote"]["kind"] == LLAMA_SERVER and report["remote"]["api_key_set"]
    assert KEY not in done.stdout + done.stderr


def test_selftest_url_without_the_key_fails_in_words(keyed):
    done = selftest("--url", keyed.url, "--rounds", "1")
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"The server at {keyed.url} wants an API key." in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
