"""Turn what the server answered (status, body, mid-stream error) into a classified failure.

Context overflow and "still loading" are not shown to the user: they become ``ContextOverflow`` and
``ServerLoading``, which the session handles (trim and retry once; wait and retry).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Any

from app.core.chat import errors

logger = logging.getLogger(__name__)

LogTail = Callable[[int], list[str]]
_LCP_OVERFLOW = re.compile(r"maximum context length is (\d+) tokens.*?\((\d+) in the messages", re.S)
_LCP_RAW_OVERFLOW = re.compile(r"Requested tokens \((\d+)\) exceed context window of (\d+)")
_LS_OVERFLOW = re.compile(r"request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)")
# LM Studio (its tracker, #237 #546): "Trying to keep the first 10136 tokens when context the overflows. However, the
# model is loaded with context length of only 7866 tokens, which is not enough."
_LMS_OVERFLOW = re.compile(r"keep the first (\d+) tokens when context the overflows.*?context length of only (\d+) "
                           r"tokens", re.S)


class ContextOverflow(Exception):
    """The server counted more prompt tokens than its (per-slot) context holds."""

    def __init__(self, n_prompt_tokens: int, n_ctx: int, request_id: str | None, raw: str = ""):
        super().__init__(f"prompt {n_prompt_tokens} tokens > context {n_ctx}")
        self.n_prompt_tokens = n_prompt_tokens
        self.n_ctx = n_ctx
        self.request_id = request_id
        self.raw = raw


class ServerLoading(Exception):
    """HTTP 503: the server is up but the model is still loading."""

    def __init__(self, request_id: str | None, raw: str = ""):
        super().__init__("model loading")
        self.request_id = request_id
        self.raw = raw


def parse_error_body(body: bytes | str) -> dict[str, Any]:
    """The ``error`` object of an error reply (llama-server, llama-cpp-python, FastAPI ``detail``)."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        data = json.loads(text)
    except ValueError:
        return {"message": text.strip()[:500]}
    if isinstance(data, dict):
        error = data.get("error", data.get("detail", data))
        if isinstance(error, dict):
            return error
        return {"message": str(error)}
    return {"message": str(data)}


def overflow_from_error(error: dict[str, Any], request_id: str | None) -> ContextOverflow | None:
    raw = json.dumps(error)[:500]
    if error.get("type") == "exceed_context_size_error" and "n_prompt_tokens" in error:
        return ContextOverflow(int(error["n_prompt_tokens"]), int(error.get("n_ctx") or 0), request_id, raw)
    message = str(error.get("message", ""))
    if error.get("code") == "context_length_exceeded":
        match = _LCP_OVERFLOW.search(message)
        if match:
            return ContextOverflow(int(match.group(2)), int(match.group(1)), request_id, raw)
    for pattern in (_LS_OVERFLOW, _LCP_RAW_OVERFLOW, _LMS_OVERFLOW):
        match = pattern.search(message)
        if match:
            return ContextOverflow(int(match.group(1)), int(match.group(2)), request_id, raw)
    return None


def classify_http(status: int, body: bytes | str, request_id: str | None,
                  log_tail: LogTail | None = None, *, url: str | None = None, key_given: bool | None = None,
                  retry_after: str | None = None) -> Exception:
    """The exception to raise for a non-200 reply. ``url`` and ``key_given`` let a 401/403 say which server
    wanted a key and whether one was sent; ``retry_after`` is a 429's Retry-After header."""
    error = parse_error_body(body)
    raw = json.dumps(error, ensure_ascii=False)[:1000]
    if status == 503:
        return ServerLoading(request_id, raw)
    if status in (401, 403):
        return errors.auth(request_id, (raw,), url=url, key_given=key_given, status=status)
    if status == 429:
        return errors.busy(request_id, _seconds(retry_after) or _seconds(error.get("retry_after")), (raw,))
    overflow = overflow_from_error(error, request_id)
    if overflow is not None:
        return overflow
    return server_error(status, str(error.get("message", "")), request_id, raw, log_tail)


def _seconds(value: Any) -> int | None:
    """Retry-After as whole seconds (the HTTP-date form is not used by the servers we meet)."""
    try:
        return max(1, int(float(str(value).strip())))
    except (TypeError, ValueError):
        return None


def classify_stream_error(error: dict[str, Any], request_id: str | None,
                          log_tail: LogTail | None = None) -> Exception:
    """An error object that arrived inside an SSE stream."""
    overflow = overflow_from_error(error, request_id)
    if overflow is not None:
        return overflow
    code = error.get("code")
    status = code if isinstance(code, int) else 500
    if status == 503:
        return ServerLoading(request_id, json.dumps(error)[:500])
    return server_error(status, str(error.get("message", "")), request_id, json.dumps(error)[:1000], log_tail)


def recent_log_lines(log_tail: LogTail | None, n: int = 20) -> list[str]:
    """The server's last log lines for an error's evidence; none when there is no (working) log source."""
    if log_tail is None:
        return []
    try:
        return [str(line) for line in log_tail(n)]
    except Exception:  # a broken log source must not hide the real error
        logger.warning("server log lines unreadable for an error's evidence", exc_info=True)
        return []


def server_error(status: int, message: str, request_id: str | None, raw: str,
                 log_tail: LogTail | None) -> errors.ChatError:
    return errors.server_error(request_id, status, message, (raw, *recent_log_lines(log_tail)))
