"""The reply's tokens/s is over generation time only: a long wait for the first token does not enter it, and a
reply whose pieces all came at once has no rate rather than an absurd one."""

from __future__ import annotations

import json

import pytest

from app.core.chat import reply as reply_module
from app.core.chat.params import HELD_BACK_SPAN_S, generation_rate
from app.core.chat.reply import ReplyStream


def test_rate_counts_the_tokens_after_the_first_over_the_time_after_the_first():
    assert generation_rate(101, started_at=0.0, first_token_at=17.0, end_at=19.0) == pytest.approx(50.0)


def test_a_fast_model_after_a_short_wait_keeps_its_rate():
    assert generation_rate(48, started_at=0.0, first_token_at=0.02, end_at=0.07) == pytest.approx(47 / 0.05)


def test_no_rate_without_two_tokens_or_when_a_long_wait_ended_with_everything_at_once():
    assert generation_rate(1, 0.0, 1.0, 5.0) is None
    assert generation_rate(0, 0.0, None, 5.0) is None
    assert generation_rate(200, 0.0, 17.26, 17.26 + HELD_BACK_SPAN_S / 20) is None  # held back, then sent at once
    # a long wait on a loaded machine, then a tiny model's 12 tokens 2.5 ms apart: a real rate
    assert generation_rate(12, 0.0, 1.5, 1.5 + 11 * 0.0025) == pytest.approx(400.0)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class ScriptedTransport:
    """The stream's lines as a server sends them; each step first moves the clock by its delay."""

    def __init__(self, clock: Clock, steps: list[tuple[float, str]]):
        self.clock, self.steps, self.stopped = clock, steps, False

    def open(self):
        return 200, {}

    def iter_lines(self):
        for delay, line in self.steps:
            self.clock.now += delay
            yield line
            yield ""

    def close(self) -> None:
        pass


def _chunk(content: str = "", finish: str | None = None, **extra) -> str:
    return "data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}],
                                  **extra})


def _stream(monkeypatch, steps: list[tuple[float, str]]) -> ReplyStream:
    clock = Clock()
    monkeypatch.setattr(reply_module.time, "perf_counter", clock)
    stream = ReplyStream(client=None, transport=ScriptedTransport(clock, steps), request_id="r", max_tokens=64,
                         read_timeout=30.0, messages=[], params=None)
    stream.open()
    list(stream)
    return stream


def test_seventeen_seconds_before_the_first_token_do_not_lower_or_raise_the_rate(monkeypatch):
    steps = [(17.26, _chunk("Hello"))] + [(0.05, _chunk(" word")) for _ in range(20)]
    steps += [(0.0, _chunk(finish="stop")), (0.0, "data: [DONE]")]
    stats = _stream(monkeypatch, steps).stats
    assert stats.ttft_s == pytest.approx(17.26)
    assert stats.completion_tokens == 21
    assert stats.tokens_per_s == pytest.approx(20 / 1.0)  # 20 tokens after the first, in 1 s
    assert stats.total_s == pytest.approx(18.26)


def test_pieces_held_back_and_sent_at_once_give_no_rate(monkeypatch):
    steps = [(17.26, _chunk("Hello"))] + [(0.0001, _chunk(" word")) for _ in range(60)]
    steps += [(0.0, _chunk(finish="stop")), (0.0, "data: [DONE]")]
    stats = _stream(monkeypatch, steps).stats
    assert stats.ttft_s == pytest.approx(17.26) and stats.completion_tokens == 61
    assert stats.tokens_per_s is None


def test_the_servers_own_generation_rate_is_kept(monkeypatch):
    timings = {"predicted_per_second": 42.5, "predicted_n": 3}
    steps = [(3.0, _chunk("a")), (0.2, _chunk("b")), (0.2, _chunk("c")),
             (0.0, _chunk(finish="stop", timings=timings)), (0.0, "data: [DONE]")]
    assert _stream(monkeypatch, steps).stats.tokens_per_s == 42.5
