"""While the server reads a long prompt the transcript's "thinking…" line says how far it is ("Reading your message:
1,024 of 3,100 tokens (33 %)"), or, on a server that does not report it, the counted size and the time without a
percentage; once every token is read (a model may think before it writes) or the first piece of the answer
comes, the line is the usual one again. The last test feeds a real llama-server's values in."""

from __future__ import annotations

import pytest

from app.core.chat.client import ChatClient
from app.core.chat.params import ChatParams
from app.core.chat.progress import PromptProgress, counted
from app.core.chat.session import DELTA, PROGRESS, ChatSession
from app.ui.chat.transcript import Transcript
from tests.integration.chat.test_harness import LLAMA_SERVER, start_server


@pytest.fixture
def transcript(qtbot):
    widget = Transcript()
    qtbot.addWidget(widget)
    widget.add_message("user", "A long question")
    widget.show_thinking()
    return widget


def last_line(transcript: Transcript) -> str:
    return transcript.plain_text().splitlines()[-1]


def test_the_servers_figures_replace_thinking_until_the_first_piece(transcript):
    assert last_line(transcript) == "thinking…"
    transcript.show_progress(counted(3100, estimate=False))
    assert last_line(transcript) == "Reading your message (about 3,100 tokens)…"
    transcript.show_progress(PromptProgress(3100, 1024, 0, 4000))
    assert last_line(transcript) == "Reading your message: 1,024 of 3,100 tokens (33 %)"
    assert transcript.plain_text().count("Reading your message") == 1  # redrawn in place
    transcript._thinking_since -= 12  # 12 s after send, on the next tick of its timer
    transcript._redraw_thinking()
    assert last_line(transcript) == "Reading your message: 1,024 of 3,100 tokens (33 %) · 12 s"
    transcript.show_progress(counted(3000, estimate=True))  # a count never replaces the server's own figure
    assert "(33 %)" in last_line(transcript)
    transcript.show_progress(PromptProgress(3100, 3100, 0, 9000))  # all read: the model may think a while now
    assert last_line(transcript) == "thinking… 12 s"

    entry = transcript.begin_reply("model.gguf")
    transcript.append_delta(entry, "Rivers")
    text = transcript.plain_text()
    assert "Reading" not in text and "thinking" not in text and text.endswith("Rivers")
    transcript.show_progress(PromptProgress(3100, 3100))  # too late: the answer has begun
    assert "Reading" not in transcript.plain_text()


def test_a_server_without_reports_shows_the_size_and_the_time_never_a_percentage(transcript):
    transcript.show_progress(counted(1234, estimate=False))
    transcript._thinking_since -= 7
    transcript._redraw_thinking()
    assert last_line(transcript) == "Reading your message (about 1,234 tokens)… 7 s"
    assert "%" not in transcript.plain_text()
    transcript.hide_thinking()  # an error or a stop before any text
    assert "Reading" not in transcript.plain_text()
    transcript.show_thinking()  # the next message starts over
    assert last_line(transcript) == "thinking…"


def test_the_reading_line_in_chinese(transcript):
    from app.ui.i18n import apply_language

    transcript.show_progress(PromptProgress(3100, 1024))
    try:
        assert apply_language("zh")
        transcript.retranslate()
        assert last_line(transcript) == "正在读取你的消息：已读 1,024 / 3,100 个词元（33 %）"
        transcript.show_progress(PromptProgress(3100, 3099))
        assert last_line(transcript) == "正在读取你的消息：已读 3,099 / 3,100 个词元（99 %）"
    finally:
        apply_language("en")
        transcript.retranslate()
    assert last_line(transcript) == "Reading your message: 3,099 of 3,100 tokens (99 %)"


def test_a_real_llama_server_long_prompt_shows_rising_percentages_then_the_answer(
        transcript, smollm2_model, llama_server_bin, tmp_path):
    server = start_server(LLAMA_SERVER, smollm2_model, 2048, tmp_path, llama_server_bin,
                          extra=("-b", "64", "-ub", "64"))
    client = ChatClient(server.url, backend=server.backend, ctx_per_slot=server.ctx)
    try:
        session = ChatSession(client, params=ChatParams(seed=1, max_tokens=2, temperature=0.0), save=False)
        shown, entry = [], None
        for event in session.send("Summarize: " + " ".join(f"lake{i} shines" for i in range(80))):
            if event.kind == PROGRESS:  # as the chat pane hands its events to the transcript
                transcript.show_progress(event.progress)
                shown.append(last_line(transcript))
            elif event.kind == DELTA:
                entry = entry or transcript.begin_reply("SmolLM2")
                transcript.append_delta(entry, event.text)
    finally:
        client.close()
        server.stop()
    readings = [line for line in shown if "%" in line]
    assert shown[0].startswith("Reading your message (about ") and len(readings) >= 2, shown
    percents = [int(line.rsplit("(", 1)[1].split(" %")[0]) for line in readings]
    assert percents == sorted(percents) and len(set(percents)) >= 2, shown
    assert shown[-1].startswith("thinking…"), shown  # the last report says every token is read
    assert entry is not None and "Reading" not in transcript.plain_text()


def test_the_chat_pane_hands_the_servers_progress_to_its_transcript(qtbot, monkeypatch):
    from app.core.chat.session import ChatEvent
    from tests.ui.chat.test_thinking import streamed_pane

    pane = streamed_pane(qtbot, monkeypatch)
    stream = pane.stream
    pane._run(lambda session: iter(()))
    stream.on_event(ChatEvent(PROGRESS, progress=PromptProgress(3100, 1024)))
    assert pane.transcript.plain_text().endswith("Assistant\nReading your message: 1,024 of 3,100 tokens (33 %)")
    stream.on_event(ChatEvent(DELTA, text="Hi"))
    assert "Reading" not in pane.transcript.plain_text() and pane.transcript.plain_text().endswith("Hi")
    stream.finish()
    pane.shutdown()
