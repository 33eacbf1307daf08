"""A long prompt through both real servers with a real small model (SmolLM2-135M): llama-server, asked with
``return_progress``, reports how far it has read before the first token; llama-cpp-python's server reports
nothing, so the session says only the prompt's size as counted, never a percentage."""

from __future__ import annotations

import pytest

from app.core.chat.client import ChatClient
from app.core.chat.completion import TEXT
from app.core.chat.params import ChatParams
from app.core.chat.session import DELTA, DONE, ERROR, PROGRESS, ChatSession
from tests.integration.chat.test_harness import EMBEDDED, LLAMA_SERVER, spawn, start_server, wait_ready

BATCH = 64  # llama-server reports once per batch: a small one gives a ~500-token prompt about nine reports


def long_text(words: int, tag: str) -> str:
    """About five tokens a word for SmolLM2; ``tag`` keeps one test's prompt out of another's cache."""
    return f"Summarize, {tag}: " + " ".join(f"river{i} flows" for i in range(words))


@pytest.fixture(scope="module")
def llama_server(smollm2_model, llama_server_bin, tmp_path_factory):
    running = start_server(LLAMA_SERVER, smollm2_model, 2048, tmp_path_factory.mktemp("progress-llama-server"),
                           llama_server_bin, extra=("-b", str(BATCH), "-ub", str(BATCH)))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def embedded_server(smollm2_model, tmp_path_factory):
    running = wait_ready(spawn(EMBEDDED, smollm2_model, 2048, tmp_path_factory.mktemp("progress-embedded")),
                         timeout=120)
    yield running
    running.stop()


def converse(server, text: str, mode: str | None = None):
    kwargs = {"mode": mode} if mode else {}
    client = ChatClient(server.url, backend=server.backend, ctx_per_slot=server.ctx, log_tail=server.log_tail,
                        **kwargs)
    try:
        session = ChatSession(client, params=ChatParams(seed=1, max_tokens=3, temperature=0.0), save=False)
        events = list(session.send(text))
    finally:
        client.close()
    errors = [event.error for event in events if event.kind == ERROR]
    assert not errors, errors
    assert events[-1].kind == DONE
    return session, events


def reading_before_answer(events) -> list:
    """The progress values, checked to come before the first piece of the answer."""
    kinds = [event.kind for event in events]
    assert DELTA in kinds, kinds
    first_delta = kinds.index(DELTA)
    assert PROGRESS in kinds[:first_delta] and PROGRESS not in kinds[first_delta:], kinds
    return [event.progress for event in events if event.kind == PROGRESS]


@pytest.mark.parametrize("mode", [None, TEXT], ids=["chat", "text-completion"])
def test_llama_server_reports_reading_in_steps_up_to_the_whole_prompt_before_the_first_token(llama_server, mode):
    session, events = converse(llama_server, long_text(100, f"llama-server {mode}"), mode)
    values = reading_before_answer(events)
    counted, reports = values[0], values[1:]
    assert not counted.reported and counted.total  # our count, until the server's first report
    assert all(report.reported for report in reports)
    processed = [report.processed for report in reports]
    total = reports[-1].total
    assert len(reports) >= 2 and processed == sorted(processed) and len(set(processed)) >= 2, processed
    assert processed[-1] == total and {report.total for report in reports} == {total}
    assert total >= 5 * BATCH  # several batches: the reports are steps, not one jump
    stats = events[-1].stats
    assert stats.prompt_tokens == total  # the server's own usage says the same size
    assert abs(counted.total - total) <= 0.1 * total  # our count was close before the server said
    shown = [report.sentence().render("en") for report in reports]
    assert shown[-1] == f"Reading your message: {total:,} of {total:,} tokens (100 %)"


def test_the_built_in_engine_says_the_counted_size_and_no_percentage(embedded_server):
    session, events = converse(embedded_server, long_text(20, "embedded"))
    values = reading_before_answer(events)
    assert len(values) == 1  # nothing from the server while it reads
    counted = values[0]
    assert not counted.reported and counted.percent is None and not counted.estimate
    assert counted.total == session.last_fit.prompt_tokens > 80
    sentence = counted.sentence(4.2)
    assert sentence.render("en") == f"Reading your message (about {counted.total:,} tokens)… 4 s"
    assert "%" not in sentence.render("en") + sentence.render("zh")
