"""How far the server has read a long prompt: llama-server's ``prompt_progress`` chunks (shapes recorded from the
b11434 build, chat route and /completion) as values, and the sentence each value makes in both languages."""

from __future__ import annotations

import json

from app.core.chat.progress import PromptProgress, counted, prompt_progress
from app.core.chat.sse import iter_payloads

# Recorded from llama-server b11434 (SmolLM2-135M, -b 256), /v1/chat/completions with "return_progress": true.
RECORDED_CHAT = [
    'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],'
    '"object":"chat.completion.chunk","prompt_progress":{"total":1424,"cache":0,"processed":0,"time_ms":0}}',
    'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],'
    '"object":"chat.completion.chunk","prompt_progress":{"total":1424,"cache":0,"processed":256,"time_ms":2042}}',
    'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],'
    '"object":"chat.completion.chunk","prompt_progress":{"total":1424,"cache":0,"processed":1424,"time_ms":23863}}',
    'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"This"}}],"object":"chat.completion.chunk"}',
    "data: [DONE]",
]
# The same server's /completion: the report sits beside the (empty) content.
RECORDED_COMPLETION = ('{"index":0,"content":"","tokens":[0],"stop":false,"id_slot":-1,"tokens_predicted":0,'
                       '"tokens_evaluated":1394,"prompt_progress":{"total":1394,"cache":0,"processed":256,'
                       '"time_ms":6318}}')


def test_recorded_chat_chunks_give_the_reports_in_order():
    lines = [part for line in RECORDED_CHAT for part in (line, "")]
    reports = [prompt_progress(payload) for payload in iter_payloads(lines)]
    assert reports == [PromptProgress(1424, 0, 0, 0), PromptProgress(1424, 256, 0, 2042),
                       PromptProgress(1424, 1424, 0, 23863), None]
    assert [r.percent for r in reports[:3]] == [0, 17, 100]


def test_a_completion_chunk_carries_its_report_too():
    assert prompt_progress(json.loads(RECORDED_COMPLETION)) == PromptProgress(1394, 256, 0, 6318)


def test_a_report_in_an_unknown_shape_is_no_report():
    for raw in ("33%", None, [1, 2], {"total": 0, "processed": 0}, {"total": 10}, {"total": 10, "processed": 11},
                {"total": "10", "processed": 5}, {"total": 10, "processed": -1}, {"total": True, "processed": 1}):
        assert prompt_progress({"prompt_progress": raw}) is None, raw
    assert prompt_progress({"choices": []}) is None


def test_cached_tokens_count_as_read():
    """A second turn: llama-server reuses 1,518 tokens of its cache and reads the 6 new ones."""
    report = prompt_progress({"prompt_progress": {"total": 1524, "cache": 1518, "processed": 1518, "time_ms": 0}})
    assert report.cache == 1518 and report.percent == 99


def test_the_sentence_with_the_servers_figures_in_both_languages():
    report = PromptProgress(3100, 1024, 0, 9000)
    assert report.sentence(0.4).render("en") == "Reading your message: 1,024 of 3,100 tokens (33 %)"
    assert report.sentence(0.4).render("zh") == "正在读取你的消息：已读 1,024 / 3,100 个词元（33 %）"
    assert report.sentence(12.7).render("en") == "Reading your message: 1,024 of 3,100 tokens (33 %) · 12 s"
    assert report.sentence(12.7).render("zh").endswith("（33 %） · 12 秒")


def test_percent_rounds_down_so_100_means_every_token_is_read():
    assert PromptProgress(3000, 2999).percent == 99 and not PromptProgress(3000, 2999).complete
    assert PromptProgress(3000, 3000).percent == 100 and PromptProgress(3000, 3000).complete
    assert not counted(3000, estimate=False).complete  # nobody said it was read


def test_without_a_report_the_sentence_says_the_count_and_the_time_never_a_percentage():
    known = counted(3100, estimate=False)
    assert not known.reported and known.percent is None
    assert known.sentence(0.2).render("en") == "Reading your message (about 3,100 tokens)…"
    assert known.sentence(7.9).render("en") == "Reading your message (about 3,100 tokens)… 7 s"
    assert known.sentence(7.9).render("zh") == "正在读取你的消息（约 3,100 个词元）… 7 秒"
    unknown = counted(0, estimate=True)
    assert unknown.total is None
    assert unknown.sentence(3).render("en") == "Reading your message… 3 s"
    assert unknown.sentence(3).render("zh") == "正在读取你的消息… 3 秒"
    for value in (known, unknown):
        for seconds in (0, 5, 61):
            assert "%" not in value.sentence(seconds).render("en") + value.sentence(seconds).render("zh")
