"""One streamed reply: text pieces as they arrive, stop at any moment, measured stats at the end.

Iterating a reply gives its text pieces; ``items()`` also gives, before the first piece, each ``PromptProgress``
the server reports while it reads the prompt (llama-server asked with ``return_progress``)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any, Protocol

import httpcore

from app.core.chat import errors
from app.core.chat.classify import ContextOverflow, LogTail, ServerLoading, classify_http, classify_stream_error
from app.core.chat.completion import completion_piece, completion_usage
from app.core.chat.params import FINISH_STOPPED, ReplyStats, generation_rate
from app.core.chat.progress import PromptProgress, prompt_progress
from app.core.chat.sse import MalformedChunk, SseDecoder, StreamErrorPayload, decode_payload
from app.core.chat.transport import StoppableStream

_CONNECTION_ERRORS = (httpcore.NetworkError, httpcore.ProtocolError, OSError)


class ReplyClient(Protocol):
    """What a reply asks of the client that started it (``ChatClient``), so this module needs no import of it."""

    log_tail: LogTail | None

    def connection_failure(self, exc: Exception, request_id: str | None, *, connect: bool) -> errors.ChatError: ...

    def overflow_behind(self, messages: list[dict[str, str]], params: Any) -> ContextOverflow | None: ...

    def failure_context(self, retry_after: str | None = None) -> dict[str, Any]: ...


class ReplyStream:
    def __init__(self, client: ReplyClient, transport: StoppableStream, request_id: str, max_tokens: int,
                 read_timeout: float, messages: list[dict[str, str]], params: Any, *, completion: bool = False):
        self._client = client
        self._completion = completion  # chunks of a text completion (app.core.chat.completion), not of a chat
        self._transport = transport
        self.request_id = request_id
        self.read_timeout = read_timeout
        self.text = ""
        self.stats = ReplyStats(request_id, max_tokens=max_tokens, messages_sent=len(messages))
        self._messages, self._params = messages, params
        self._started = 0.0
        self._first_token_at: float | None = None
        self._last_token_at: float | None = None
        self._done = False
        self.progress_reports = 0  # prompt_progress values the server sent before the first piece
        self.first_progress_s: float | None = None  # send -> the first of them

    @property
    def stopped(self) -> bool:
        return self._transport.stopped

    def open(self) -> None:
        self._started = time.perf_counter()
        try:
            status, headers = self._transport.open()
            if status != 200:
                body = self._transport.read_body()
                self._transport.close()
                raise classify_http(status, body, self.request_id, self._client.log_tail,
                                    **self._client.failure_context(headers.get("retry-after")))
        except _CONNECTION_ERRORS + (httpcore.TimeoutException,) as exc:
            self._transport.close()
            if self.stopped:
                return
            connect = isinstance(exc, (httpcore.ConnectError, httpcore.ConnectTimeout))
            raise self._failure(exc, connect=connect) from None

    def stop(self) -> None:
        """Abort from any thread; iteration ends quietly with finish reason "stopped"."""
        self._transport.stop()

    def __iter__(self) -> Iterator[str]:
        for item in self.items():
            if isinstance(item, str):
                yield item

    def items(self) -> Iterator[str | PromptProgress]:
        """Text pieces, and before the first one the server's reports of how far it has read the prompt."""
        try:
            yield from self._pieces()
        except (StreamErrorPayload, MalformedChunk) as exc:
            raise self._payload_failure(exc) from None
        except _CONNECTION_ERRORS + (httpcore.TimeoutException,) as exc:
            if not self.stopped:
                raise self._failure(exc, connect=False) from None
        finally:
            self._transport.close()
            self._finish()

    def _pieces(self) -> Iterator[str | PromptProgress]:
        if self.stopped:
            return
        decoder = SseDecoder()
        for line in self._transport.iter_lines():
            if self._transport.stopped:
                return  # drop what was already buffered: the user asked for no more text
            message = decoder.feed(line)
            if message is None:
                continue
            payload = decode_payload(message)
            if payload is None:
                self._done = True
                return
            progress = self._progress_in(payload)
            if progress is not None:
                yield progress
            piece = self._absorb(payload)
            if piece:
                yield piece
        if not self._done and not self.stopped and self.stats.finish_reason is None:
            raise httpcore.RemoteProtocolError("the stream ended before the answer was complete")

    def _progress_in(self, payload: dict[str, Any]) -> PromptProgress | None:
        if self._first_token_at is not None:
            return None  # the answer has begun: reading is over
        progress = prompt_progress(payload)
        if progress is not None:
            self.progress_reports += 1
            if self.first_progress_s is None:
                self.first_progress_s = time.perf_counter() - self._started
        return progress

    def _absorb(self, payload: dict[str, Any]) -> str:
        piece = ""
        if self._completion:
            piece, finish = completion_piece(payload)
            if finish:
                self.stats.finish_reason = finish
        elif payload.get("choices"):
            choice = payload["choices"][0]
            piece = (choice.get("delta") or {}).get("content") or ""
            if choice.get("finish_reason"):
                self.stats.finish_reason = choice["finish_reason"]
        if piece:
            now = time.perf_counter()
            if self._first_token_at is None:
                self._first_token_at = now
            self._last_token_at = now
            self.stats.completion_tokens += 1
            self.text += piece
        usage = completion_usage(payload) if self._completion else payload.get("usage")
        if isinstance(usage, dict) and usage.get("prompt_tokens") is not None:
            self.stats.prompt_tokens = int(usage["prompt_tokens"])
            self.stats.completion_tokens = int(usage.get("completion_tokens") or self.stats.completion_tokens)
            self.stats.tokens_source = "server"
        timings = payload.get("timings")
        if isinstance(timings, dict) and timings.get("predicted_per_second"):
            self.stats.tokens_per_s = float(timings["predicted_per_second"])
        return piece

    def _finish(self) -> None:
        now = time.perf_counter()
        self.stats.total_s = now - self._started
        if self._first_token_at is not None:
            self.stats.ttft_s = self._first_token_at - self._started
        if self.stats.tokens_per_s is None:  # the server's own timings are over generation only too
            self.stats.tokens_per_s = generation_rate(self.stats.completion_tokens, self._started,
                                                        self._first_token_at, now)
        if self.stopped and not self._done:
            self.stats.finish_reason = FINISH_STOPPED

    def _payload_failure(self, exc: StreamErrorPayload | MalformedChunk) -> Exception:
        if isinstance(exc, MalformedChunk):
            return errors.malformed(self.request_id, exc.reason, (exc.raw,))
        failure = classify_stream_error(exc.error, self.request_id, self._client.log_tail)
        if isinstance(failure, ServerLoading):
            return errors.server_error(self.request_id, 503, str(exc.error.get("message", "")), ())
        return failure

    def _failure(self, exc: Exception, *, connect: bool) -> Exception:
        if isinstance(exc, httpcore.TimeoutException) and not isinstance(exc, httpcore.ConnectTimeout):
            return errors.too_slow(self.request_id, self.read_timeout)
        failure = self._client.connection_failure(exc, self.request_id, connect=connect)
        if failure.kind == errors.SERVER_ERROR and not self.text:
            # llama-cpp-python answers 200 and then drops a stream whose prompt is too long; only a
            # non-streamed request gets its 400 with the numbers.
            return self._client.overflow_behind(self._messages, self._params) or failure
        return failure
