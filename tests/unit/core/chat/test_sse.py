"""SSE parsing as llama-server and llama-cpp-python send it (recorded shapes, no server needed)."""

from __future__ import annotations

import json

import pytest

from app.core.chat.sse import MalformedChunk, SseDecoder, StreamErrorPayload, iter_messages, iter_payloads


def chunk(content: str, finish=None) -> str:
    return "data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": content},
                                               "finish_reason": finish}]})


def test_data_lines_keepalive_and_done():
    lines = [": ping - 2026-11-30 15:00:00", "", chunk("Hel"), "", ": keep-alive", chunk("lo"), "",
             chunk("", "stop"), "", "data: [DONE]", "", chunk("never"), ""]
    pieces = [p["choices"][0]["delta"]["content"] for p in iter_payloads(lines)]
    assert pieces == ["Hel", "lo", ""]


def test_crlf_line_endings_from_sse_starlette():
    lines = [chunk("a") + "\r", "\r", "data: [DONE]\r", "\r"]
    assert [p["choices"][0]["delta"]["content"] for p in iter_payloads(lines)] == ["a"]


def test_data_without_space_and_multiline_data_are_joined():
    decoder = SseDecoder()
    assert decoder.feed('data:{"a":') is None
    assert decoder.feed('data: 1}') is None
    message = decoder.feed("")
    assert message is not None and json.loads(message.data.replace("\n", "")) == {"a": 1}


def test_mid_stream_error_object_raises_with_the_error():
    error = {"code": 500, "message": "boom", "type": "server_error"}
    lines = [chunk("x"), "", "data: " + json.dumps({"error": error}), ""]
    payloads = iter_payloads(lines)
    assert next(payloads)["choices"][0]["delta"]["content"] == "x"
    with pytest.raises(StreamErrorPayload) as caught:
        next(payloads)
    assert caught.value.error == error


def test_legacy_error_line_and_event_error():
    with pytest.raises(StreamErrorPayload) as caught:
        list(iter_payloads(['error: {"code": 400, "message": "bad", "type": "exceed_context_size_error"}', ""]))
    assert caught.value.error["type"] == "exceed_context_size_error"
    with pytest.raises(StreamErrorPayload):
        list(iter_payloads(["event: error", 'data: {"message": "x"}', ""]))


def test_malformed_json_is_reported_with_the_raw_text():
    with pytest.raises(MalformedChunk) as caught:
        list(iter_payloads(["data: {not json", ""]))
    assert "{not json" in caught.value.raw
    with pytest.raises(MalformedChunk):
        list(iter_payloads(["data: [1, 2]", ""]))


def test_message_without_trailing_blank_line_is_flushed_at_end():
    assert [m.data for m in iter_messages(["data: [DONE]"])] == ["[DONE]"]


def test_usage_chunk_with_empty_choices_is_a_payload():
    usage = {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}
    assert list(iter_payloads(["data: " + json.dumps(usage), "", "data: [DONE]", ""])) == [usage]
