"""The self-test's first question to the server: wait while the model loads, give up with a sentence, not a
traceback."""

from __future__ import annotations

import pytest

from app.core.chat import errors
from app.core.chat.classify import ServerLoading
from app.core.chat.client import ServerInfo
from app.core.chat.selftest import run_selftest


class LoadingServerClient:
    """Answers "still loading" (what a ServerLoading from HTTP 503 means) ``loading_answers`` times, then its info."""

    base_url = "http://127.0.0.1:1"

    def __init__(self, loading_answers: int):
        self.loading_answers = loading_answers
        self.asked = 0

    def server_info(self, refresh: bool = False) -> ServerInfo:
        self.asked += 1
        if self.asked <= self.loading_answers:
            raise ServerLoading("req", '{"message": "Loading model"}')
        return ServerInfo("llama-server", 512)


def test_selftest_waits_while_the_model_loads():
    client, slept = LoadingServerClient(loading_answers=3), []
    report = run_selftest(client, rounds=0, long_answer=False, server_pid=1, sleep=slept.append)
    assert client.asked == 4 and slept == [0.25, 0.5, 1.0]
    assert report.ctx_per_slot == 512 and report.rounds == [] and report.skipped_rounds == 0


def test_selftest_gives_up_on_a_model_that_never_loads_with_a_classified_error():
    slept: list[float] = []
    with pytest.raises(errors.ChatError) as caught:
        run_selftest(LoadingServerClient(loading_answers=10**6), rounds=0, long_answer=False, server_pid=1,
                     loading_wait_s=5.0, sleep=slept.append)
    assert caught.value.kind == errors.LOADING and "still loading" in caught.value.message.render("en")
    assert sum(slept) >= 5.0
