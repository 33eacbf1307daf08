"""OpenAI-compatible chat client for llama-server and llama-cpp-python's server.

``ChatClient.stream(messages, params)`` opens one streamed reply (a ``ReplyStream``); iterate it for text
pieces, call ``stop()`` from any thread to abort, read ``stats`` afterwards. Every request carries an
``X-Request-Id``; every failure leaves as a ``ChatError`` (or, for the session to handle invisibly,
``ContextOverflow`` / ``ServerLoading``).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from app.core.chat import errors
from app.core.chat.classify import ContextOverflow, LogTail, ServerLoading, classify_http, recent_log_lines
from app.core.chat.completion import CHAT, TEXT, completion_request, completion_usage
from app.core.chat.params import ChatParams
from app.core.chat.progress import RETURN_PROGRESS
from app.core.chat.reply import ReplyStream
from app.core.chat.transport import StoppableStream

if TYPE_CHECKING:
    from app.core.diagnosis.value import Diagnosis

BACKEND_LLAMA_SERVER = "llama-server"
BACKEND_EMBEDDED = "embedded"
CrashInfo = Callable[[], "Diagnosis | None"]
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServerInfo:
    backend: str  # "llama-server" | "embedded"
    ctx_per_slot: int | None  # None: unknown until the server reports an overflow
    total_slots: int = 1
    model: str | None = None


def new_request_id() -> str:
    return uuid.uuid4().hex  # a full UUID: llama-cpp-python rejects other X-Request-Id values with 400


class ChatClient:
    """Talks to one server. ``crash_info()`` returns the supervisor's Diagnosis while it reports a crash
    (else None); ``log_tail(n)`` returns the server's last log lines. Both are optional.

    ``mode`` is CHAT (the chat endpoint, the server applies the model's chat template) or TEXT (a base model
    without one: the completion endpoint continues the transcript as a text, see app.core.chat.completion)."""

    def __init__(self, base_url: str | Callable[[], str], *, api_key: str | None = None, backend: str | None = None,
                 ctx_per_slot: int | Callable[[], int | None] | None = None, connect_timeout: float = 5.0,
                 read_timeout: float = 120.0,
                 crash_info: CrashInfo | None = None, log_tail: LogTail | None = None,
                 crash_wait_s: float = 3.0, mode: str = CHAT, model: str | None = None):
        self._base_url = base_url
        self.model = model  # sent as "model" (Ollama and LM Studio need it; a single-model llama-server ignores it)
        self.mode = mode
        self.api_key = api_key
        self.backend = backend
        self.ctx_per_slot = ctx_per_slot  # what we were told; a callable follows a supervisor's running settings
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.crash_info = crash_info
        self.log_tail = log_tail
        self.crash_wait_s = crash_wait_s
        self._info: ServerInfo | None = None
        self._http = httpx.Client(timeout=httpx.Timeout(read_timeout, connect=connect_timeout))

    @property
    def base_url(self) -> str:
        """The server address; a callable source (a supervisor's ``url``) follows restarts on another port."""
        url = (self._base_url() if callable(self._base_url) else self._base_url).rstrip("/")
        return url[:-3] if url.endswith("/v1") else url

    def close(self) -> None:
        self._http.close()

    def told_ctx(self) -> int | None:
        """The per-slot context we were told (the server's own figure, where it says one, wins over it)."""
        told = self.ctx_per_slot
        return told() if callable(told) else told

    def forget_server(self) -> None:
        """Ask the server again who it is on the next request (after a crash and restart)."""
        self._info = None

    def failure_context(self, retry_after: str | None = None) -> dict[str, Any]:
        """What ``classify_http`` needs to word a refusal: the address, whether a key was sent, Retry-After."""
        return {"url": self.base_url, "key_given": bool(self.api_key), "retry_after": retry_after}

    def headers(self, request_id: str) -> dict[str, str]:
        headers = {"X-Request-Id": request_id}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    # -- plain JSON requests -------------------------------------------------------------------------
    def _request(self, method: str, path: str, body: dict | None = None, *,
                 ok_statuses: tuple[int, ...] = (200,)) -> tuple[int, Any]:
        request_id = new_request_id()
        try:
            reply = self._http.request(method, self.base_url + path, json=body, headers=self.headers(request_id))
        except httpx.TimeoutException as exc:
            if isinstance(exc, httpx.ConnectTimeout):
                raise self.connection_failure(exc, request_id, connect=True) from None
            raise errors.too_slow(request_id, self.read_timeout) from None
        except httpx.TransportError as exc:
            raise self.connection_failure(exc, request_id, connect=isinstance(exc, httpx.ConnectError)) from None
        if reply.status_code not in ok_statuses:
            raise classify_http(reply.status_code, reply.content, request_id, self.log_tail, **self.failure_context(
                reply.headers.get("retry-after")))
        try:
            return reply.status_code, reply.json() if reply.status_code == 200 else None
        except ValueError:
            raise errors.malformed(request_id, f"{path} is not JSON", (reply.text[:300],)) from None

    def server_info(self, refresh: bool = False) -> ServerInfo:
        """Which backend answers and its per-slot context. Raises ServerLoading while a model loads."""
        if self._info is not None and not refresh:
            return self._info
        info = None
        if self.backend != BACKEND_EMBEDDED:
            status, props = self._request("GET", "/props", ok_statuses=(200, 404, 405))
            if status == 200 and isinstance(props, dict) and "default_generation_settings" in props:
                settings = props.get("default_generation_settings") or {}
                n_ctx = settings.get("n_ctx") or props.get("n_ctx")
                info = ServerInfo(BACKEND_LLAMA_SERVER, int(n_ctx) if n_ctx else self.told_ctx(),
                                  int(props.get("total_slots") or 1), props.get("model_path"))
        if info is None:
            _, models = self._request("GET", "/v1/models")
            model = ((models or {}).get("data") or [{}])[0].get("id") if isinstance(models, dict) else None
            info = ServerInfo(self.backend or BACKEND_EMBEDDED, self.told_ctx(), 1, model)
        self._info = info
        return info

    @property
    def text_completion(self) -> bool:
        """Whether this client continues text (a base model) instead of chatting."""
        return self.mode == TEXT

    def _endpoint(self, messages: list[dict[str, str]], fields: dict[str, Any], stream: bool) -> tuple[str, dict]:
        """(path, body) of one reply in this client's mode."""
        if self.model:
            fields = {"model": self.model, **fields}
        if self.text_completion:
            return completion_request(self.server_info().backend == BACKEND_LLAMA_SERVER, messages, fields, stream)
        return "/v1/chat/completions", {"messages": messages, "stream": stream, **fields}

    def learn_ctx(self, n_ctx: int) -> None:
        """The server said how large its per-slot context really is (from an overflow reply)."""
        info = self.server_info()
        self._info = ServerInfo(info.backend, n_ctx, info.total_slots, info.model)

    def tokenize(self, text: str) -> list[int] | None:
        """Token ids of ``text`` as the server counts them; None when the server cannot tokenize."""
        if self.server_info().backend == BACKEND_LLAMA_SERVER:
            body, path = {"content": text, "add_special": False, "parse_special": True}, "/tokenize"
        else:
            body, path = {"input": text}, "/extras/tokenize"
        status, data = self._request("POST", path, body, ok_statuses=(200, 404, 405, 501))
        if status != 200 or not isinstance(data, dict) or not isinstance(data.get("tokens"), list):
            return None
        return data["tokens"]

    def complete(self, messages: list[dict[str, str]], params: ChatParams, max_tokens: int) -> dict[str, Any]:
        """One non-streamed reply (used to calibrate token counts from ``usage.prompt_tokens``)."""
        path, body = self._endpoint(messages, params.request_fields(max_tokens), stream=False)
        _, data = self._request("POST", path, body)
        if not isinstance(data, dict):
            raise errors.malformed(None, "chat reply is not an object")
        if self.text_completion and completion_usage(data) is not None:
            data = {**data, "usage": completion_usage(data)}
        return data

    def overflow_behind(self, messages: list[dict[str, str]], params: ChatParams) -> ContextOverflow | None:
        """Ask without streaming whether the prompt overflows (it then fails fast, before any generation)."""
        try:
            self.complete(messages, params, max_tokens=1)
        except ContextOverflow as overflow:
            return overflow
        except (errors.ChatError, ServerLoading):
            pass
        return None

    # -- streaming ------------------------------------------------------------------------------------
    def stream(self, messages: list[dict[str, str]], params: ChatParams, *, max_tokens: int | None = None,
               read_timeout: float | None = None) -> ReplyStream:
        """Open a streamed reply. Raises ContextOverflow, ServerLoading or ChatError before any text arrives."""
        reply = self.prepare_stream(messages, params, max_tokens=max_tokens, read_timeout=read_timeout)
        reply.open()
        return reply

    def prepare_stream(self, messages: list[dict[str, str]], params: ChatParams, *, max_tokens: int | None = None,
                       read_timeout: float | None = None) -> ReplyStream:
        """A reply not yet sent: hand it to the thread that may stop it, then call ``open()``."""
        info = self.server_info()
        max_tokens = max_tokens if max_tokens is not None else params.effective_max_tokens(info.ctx_per_slot)
        path, body = self._endpoint(messages, params.request_fields(max_tokens), stream=True)
        if info.backend == BACKEND_LLAMA_SERVER:
            body[RETURN_PROGRESS] = True  # how far it has read a long prompt (other servers are not asked)
            if not self.text_completion:
                body["stream_options"] = {"include_usage": True}
        request_id = new_request_id()
        headers = {**self.headers(request_id), "Accept": "text/event-stream"}
        timeout = read_timeout or self.read_timeout
        transport = StoppableStream(self.base_url + path, headers, body,
                                    connect_timeout=self.connect_timeout, read_timeout=timeout)
        return ReplyStream(self, transport, request_id, max_tokens, timeout, messages, params,
                           completion=self.text_completion)

    # -- failures -------------------------------------------------------------------------------------
    def connection_failure(self, exc: Exception, request_id: str | None, *, connect: bool) -> errors.ChatError:
        """A refused / reset connection: a crash when the supervisor says so, else unreachable or dead."""
        evidence = (f"{type(exc).__name__}: {exc}",)
        diagnosis = self._wait_for_crash_report()
        if diagnosis is not None:
            return errors.server_crashed(request_id, diagnosis, evidence)
        if connect:
            return errors.unreachable(request_id, self.base_url, evidence)
        if not self._still_answers():
            return errors.server_crashed(request_id, None, evidence)
        return errors.server_error(request_id, 0, "the connection closed in the middle of the answer",
                                   evidence + tuple(self._log_lines()))

    def _wait_for_crash_report(self) -> Diagnosis | None:
        if self.crash_info is None:
            return None
        deadline = time.monotonic() + self.crash_wait_s
        while True:
            try:
                diagnosis = self.crash_info()
            except Exception:  # a broken crash source must not hide the connection failure itself
                logger.warning("the crash report could not be read", exc_info=True)
                return None
            if diagnosis is not None or time.monotonic() >= deadline:
                return diagnosis
            time.sleep(0.1)

    def _still_answers(self) -> bool:
        """Whether the server still answers HTTP after it closed a connection in the middle of an answer.

        A TCP connect alone proves nothing: a SIGKILLed server's listening socket still takes connections for a
        moment while the kernel tears the process down (on a busy machine long enough to be seen), and nobody
        ever answers them. So ask for ``/health`` on a fresh connection: any HTTP status (404 from a server
        without that route, 503 while loading) is an answer; a refusal, a reset or silence means it is gone."""
        try:
            with httpx.Client(timeout=httpx.Timeout(max(1.0, self.crash_wait_s), connect=1.0)) as probe:
                probe.get(self.base_url + "/health", headers={**self.headers(new_request_id()), "Connection": "close"})
            return True
        except httpx.HTTPError as exc:
            logger.info("no answer from %s after a dropped stream (%s): taking the server as stopped",
                        self.base_url, type(exc).__name__)
            return False

    def _log_lines(self) -> list[str]:
        return recent_log_lines(self.log_tail)

