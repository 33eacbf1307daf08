"""Server-sent events as llama-server and llama-cpp-python send them.

Both servers send ``data: <json>`` messages ended by a blank line and finish with ``data: [DONE]``.
Lines starting with ``:`` are keep-alive comments. An error in the middle of a stream arrives as
``data: {"error": {...}}`` (older llama-server builds wrote a bare ``error: {...}`` line instead).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

DONE = "[DONE]"


@dataclass(frozen=True)
class SseMessage:
    data: str
    event: str | None = None


class StreamErrorPayload(Exception):
    """The server reported an error inside the stream; ``error`` is its error object."""

    def __init__(self, error: Any):
        super().__init__(str(error))
        self.error = error if isinstance(error, dict) else {"message": str(error)}


class MalformedChunk(Exception):
    """A ``data:`` payload that is not the JSON object we expect; ``raw`` holds it for evidence."""

    def __init__(self, reason: str, raw: str):
        super().__init__(reason)
        self.reason = reason
        self.raw = raw


class SseDecoder:
    """Feed lines (without their line ending); get a message each time a blank line ends one."""

    def __init__(self) -> None:
        self._data: list[str] = []
        self._event: str | None = None

    def feed(self, line: str) -> SseMessage | None:
        if not line:
            return self.flush()
        if line[0] == ":":
            return None  # keep-alive comment
        name, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "error":  # legacy llama-server: `error: {...}` on its own line
            self._data.append(value)
            self._event = "error"
        return None

    def flush(self) -> SseMessage | None:
        if not self._data:
            self._event = None
            return None
        message = SseMessage("\n".join(self._data), self._event)
        self._data, self._event = [], None
        return message


def iter_messages(lines: Iterable[str]) -> Iterator[SseMessage]:
    decoder = SseDecoder()
    for line in lines:
        message = decoder.feed(line.rstrip("\r\n"))
        if message is not None:
            yield message
    tail = decoder.flush()
    if tail is not None:
        yield tail


def decode_payload(message: SseMessage) -> dict[str, Any] | None:
    """The JSON object of one message; None for ``[DONE]``. Raises StreamErrorPayload / MalformedChunk."""
    data = message.data
    if data.strip() == DONE:
        return None
    try:
        payload = json.loads(data)
    except ValueError:
        raise MalformedChunk("not JSON", data[:500]) from None
    if message.event == "error":
        raise StreamErrorPayload(payload.get("error", payload) if isinstance(payload, dict) else payload)
    if not isinstance(payload, dict):
        raise MalformedChunk("not a JSON object", data[:500])
    if "error" in payload and "choices" not in payload:
        raise StreamErrorPayload(payload["error"])
    return payload


def iter_payloads(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """JSON chunks of a chat stream, stopping at ``[DONE]``."""
    for message in iter_messages(lines):
        payload = decode_payload(message)
        if payload is None:
            return
        yield payload
