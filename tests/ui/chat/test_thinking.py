"""From send until the first piece of the answer the transcript says "Assistant · thinking… N s", so a slow first
answer (a model still loading, a long prompt) does not look like a freeze. Driven with the values the stream
gives the pane (ChatEvent, ReplyStats, StreamOutcome): the widget's reaction, not a server's."""

from __future__ import annotations

import pytest

from app.core.chat import ChatClient, ReplyStats, errors
from app.core.chat.session import DELTA, DONE, ERROR, WAITING, ChatEvent
from app.core.text import T
from app.ui.chat import chat_pane as chat_pane_module
from app.ui.chat.chat_pane import ChatPane
from app.ui.chat.stream_job import StreamOutcome
from app.ui.chat.transcript import Transcript


class Stream:
    """Stands in for start_stream: keeps the pane's callbacks so the test hands it the stream's values."""

    def __init__(self) -> None:
        self.on_event = self.on_done = self.on_error = None

    def __call__(self, session, start, *, on_event, on_done, on_error):
        self.on_event, self.on_done, self.on_error = on_event, on_done, on_error
        return object()  # the pane's task: "streaming" until on_done

    def finish(self, pending: bool = False) -> None:
        self.on_done(StreamOutcome(context=None, pending=pending))


def streamed_pane(qtbot, monkeypatch) -> ChatPane:
    """A pane with a client (never asked: the test hands the stream's values) whose stream is a ``Stream``."""
    stream = Stream()
    monkeypatch.setattr(chat_pane_module, "start_stream", stream)
    widget = ChatPane()
    qtbot.addWidget(widget)
    widget.set_client(ChatClient("http://127.0.0.1:9"))
    widget.stream = stream
    return widget


@pytest.fixture
def pane(qtbot, monkeypatch):
    widget = streamed_pane(qtbot, monkeypatch)
    yield widget
    widget.shutdown()


def begin(pane: ChatPane) -> Stream:
    pane.transcript.add_message("user", "Hello")
    pane._run(lambda session: iter(()))
    return pane.stream


def test_thinking_from_send_until_the_first_token_then_the_answer_and_its_rate(pane):
    stream = begin(pane)
    transcript = pane.transcript
    assert transcript.is_thinking() and pane.is_streaming()
    assert transcript.plain_text().endswith("Assistant\nthinking…")
    transcript._thinking_since -= 17  # 17 s later, on the next tick of its timer
    transcript._redraw_thinking()
    assert transcript.plain_text().endswith("Assistant\nthinking… 17 s")
    assert transcript.plain_text().count("thinking") == 1  # redrawn in place, not added again

    stream.on_event(ChatEvent(WAITING, notice=T("The model is still loading.", "模型仍在加载。")))
    text = transcript.plain_text()
    assert text.index("The model is still loading.") < text.index("thinking… 17 s")  # the wait stays last
    assert text.endswith("thinking… 17 s")

    stream.on_event(ChatEvent(DELTA, text="Hi"))
    stream.on_event(ChatEvent(DELTA, text=" there"))
    assert not transcript.is_thinking() and "thinking" not in transcript.plain_text()
    assert transcript.plain_text().endswith("Assistant\nHi there")
    stats = ReplyStats("r", ttft_s=17.26, total_s=18.26, tokens_per_s=40.0, completion_tokens=41,
                       finish_reason="stop")
    stream.on_event(ChatEvent(DONE, stats=stats))
    stream.finish()
    text = transcript.plain_text()
    assert "first token after 17.26 s · 40.0 tokens/s · The answer is complete." in text
    assert "thinking" not in text and not pane.is_streaming()


def test_an_error_before_the_first_token_ends_the_thinking(pane):
    stream = begin(pane)
    stream.on_event(ChatEvent(ERROR, error=errors.too_slow("r", 120)))
    assert not pane.transcript.is_thinking()
    text = pane.transcript.plain_text()
    assert "thinking" not in text and "The server sent nothing for 120 s." in text
    stream.finish(pending=True)
    assert "thinking" not in pane.transcript.plain_text()


def test_stopped_before_the_first_token_leaves_no_thinking_behind(pane):
    stream = begin(pane)
    stream.on_event(ChatEvent(DONE, stats=ReplyStats("r", finish_reason="stopped")))
    stream.finish(pending=True)
    assert not pane.transcript.is_thinking() and "thinking" not in pane.transcript.plain_text()


def test_a_failure_below_the_session_ends_the_thinking(pane):
    stream = begin(pane)
    stream.on_error(RuntimeError("boom"))
    assert not pane.transcript.is_thinking() and "thinking" not in pane.transcript.plain_text()


def test_thinking_in_chinese_after_a_language_switch(qtbot):
    from app.ui.i18n import apply_language

    transcript = Transcript()
    qtbot.addWidget(transcript)
    transcript.show_thinking()
    try:
        assert apply_language("zh")
        transcript.retranslate()
        assert transcript.plain_text().endswith("思考中…") and transcript.plain_text().count("思考中") == 1
    finally:
        apply_language("en")
        transcript.retranslate()
    assert transcript.plain_text().endswith("thinking…")
    transcript.hide_thinking()
    assert transcript.plain_text() == ""
