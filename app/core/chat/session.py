"""ChatSession: one conversation with one server, safe against overflow, crashes and slow servers.

``send(text)`` yields ChatEvents while the answer streams: ``delta`` (text), ``trimmed`` / ``notice``
(a Text to show), ``waiting`` (model still loading), ``progress`` (a PromptProgress: how far the server has read
the prompt, before the first token), then ``done`` (ReplyStats) or ``error`` (ChatError).
``stop()`` may be called from any thread. The conversation is saved after every completed message.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from app.core.chat import errors
from app.core.chat.classify import ContextOverflow, ServerLoading
from app.core.chat.client import ChatClient
from app.core.chat.conversation import (
    ANSWERED,
    COMPLETE,
    INTERRUPTED,
    PENDING,
    STOPPED,
    STREAMING,
    UNANSWERED,
    Conversation,
    Message,
    save_conversation,
)
from app.core.chat.guard import DEFAULT_MARGIN, FitResult, fit_history
from app.core.chat.params import FINISH_LENGTH, FINISH_STOPPED, ChatParams, ReplyStats
from app.core.chat.progress import PromptProgress, counted
from app.core.chat.reply import ReplyStream
from app.core.chat.tokens import TokenCounter
from app.core.text import T, Text

DELTA, TRIMMED, NOTICE, WAITING, DONE, ERROR = "delta", "trimmed", "notice", "waiting", "done", "error"
PROGRESS = "progress"
_SAVE_EVERY_S = 1.0
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ChatEvent:
    kind: str
    text: str = ""
    notice: Text | None = None
    stats: ReplyStats | None = None
    error: errors.ChatError | None = None
    progress: PromptProgress | None = None


class _Stopped(Exception):
    pass


class ChatSession:
    def __init__(self, client: ChatClient, conversation: Conversation | None = None, *,
                 params: ChatParams | None = None, margin: float = DEFAULT_MARGIN, save: bool = True,
                 directory: Path | None = None, loading_wait_s: float = 300.0,
                 sleep: Callable[[float], None] = time.sleep):
        self.client = client
        self.conversation = conversation or Conversation(params=params or ChatParams())
        if params is not None:
            self.conversation.params = params
        self.margin = margin
        self.save_enabled = save
        self.directory = directory
        self.loading_wait_s = loading_wait_s
        self._sleep = sleep
        self.counter: TokenCounter | None = None
        self.last_fit: FitResult | None = None
        self._reply: ReplyStream | None = None
        self._stop_requested = False
        self._estimate_notice_shown = False
        self.history_share = 1.0  # below 1 while memory is short (the watchdog's warning): older turns trimmed

    @property
    def params(self) -> ChatParams:
        return self.conversation.params

    def new_chat(self, params: ChatParams | None = None) -> Conversation:
        self.conversation = Conversation(params=params or self.params)
        return self.conversation

    def stop(self) -> None:
        """Stop the answer being streamed, or the one asked for by the last ``send``/``resend_pending`` whose
        iterator has not started yet (safe from any thread); the server slot is freed at once."""
        self._stop_requested = True
        reply = self._reply
        if reply is not None:
            reply.stop()

    def send(self, text: str, *, read_timeout: float | None = None) -> Iterator[ChatEvent]:
        """Ask for an answer to ``text``; the returned iterator saves the conversation, then streams.

        Cheap and without I/O, so a GUI calls it on its own thread and iterates on a worker: a ``stop()`` that
        comes after this call and before the worker starts is then kept, not undone by the answer's start.
        """
        self._stop_requested = False  # a new answer: a stop of an earlier one does not carry over
        previous = self.conversation.pending_message()
        if previous is not None:
            previous.status = UNANSWERED  # kept and visible, but not sent to the model any more
        user = self.conversation.add("user", text, PENDING)
        return self._answer(user, read_timeout, save_first=True)

    def resend_pending(self, *, read_timeout: float | None = None) -> Iterator[ChatEvent]:
        """Send again the message that was being answered when something failed (e.g. the server died)."""
        self._stop_requested = False
        user = self.conversation.pending_message()
        if user is None:
            return iter(())
        return self._answer(user, read_timeout)

    def save(self) -> None:
        if self.save_enabled:
            save_conversation(self.conversation, self.directory)

    # -- one answer ---------------------------------------------------------------------------------
    def _answer(self, user: Message, read_timeout: float | None, *, save_first: bool = False) -> Iterator[ChatEvent]:
        # No reset of _stop_requested here: this body starts on the first next(), which can come after stop().
        if save_first:
            self.save()
        answer: Message | None = None
        try:
            yield from self._prepare()
            for attempt in (1, 2):
                fit = self._fit()
                if attempt == 1:
                    for notice in fit.notices:
                        yield ChatEvent(TRIMMED, notice=notice)
                try:
                    reply = yield from self._with_loading_wait(lambda fit=fit: self._open(fit, read_timeout))
                    answer = self.conversation.add("assistant", "", STREAMING)
                    yield ChatEvent(PROGRESS, progress=self._counted_prompt(fit))  # until the server says more
                    yield from self._stream_into(reply, answer)
                    break
                except ContextOverflow as overflow:
                    if answer is not None and answer.content:
                        raise errors.server_error(overflow.request_id, 400, str(overflow), (overflow.raw,)) from None
                    self._drop(answer)
                    answer = None
                    if attempt == 2:
                        raise self._overflow_error(overflow, fit) from None
                    self._absorb_overflow(overflow, fit)
            assert answer is not None  # the loop above ends with an answer or raises
            stats = self._finish_answer(user, answer, fit, retried=attempt == 2)
            yield ChatEvent(DONE, stats=stats)
        except _Stopped:
            self._drop(answer)
            self.save()
            yield ChatEvent(DONE, stats=ReplyStats("", finish_reason=FINISH_STOPPED))
        except errors.ChatError as error:
            if error.kind in (errors.SERVER_CRASHED, errors.UNREACHABLE):
                self.client.forget_server()
            self._keep_partial(answer)
            yield ChatEvent(ERROR, error=error)
        finally:
            self._reply = None

    def _prepare(self) -> Iterator[ChatEvent]:
        info = yield from self._with_loading_wait(self.client.server_info)
        if self.counter is None:
            counter = self.counter = TokenCounter(self.client.tokenize)
            yield from self._with_loading_wait(lambda: counter.calibrate(self._prompt_tokens_of))
        if self.counter.notice is not None and not self._estimate_notice_shown:
            self._estimate_notice_shown = True
            yield ChatEvent(NOTICE, notice=self.counter.notice)
        return info

    @property
    def _token_counter(self) -> TokenCounter:
        """The counter ``_prepare`` set up before the first message was sent."""
        assert self.counter is not None
        return self.counter

    def _prompt_tokens_of(self, messages: list[dict[str, str]]) -> int:
        reply = self.client.complete(messages, self.params.with_changes(seed=0), max_tokens=1)
        usage = reply.get("usage") or {}
        if "prompt_tokens" not in usage:
            raise errors.malformed(None, "no usage.prompt_tokens in a chat reply")
        return int(usage["prompt_tokens"])

    def _max_tokens(self) -> int:
        return self.params.effective_max_tokens(self.client.server_info().ctx_per_slot)

    def _fit(self) -> FitResult:
        history = self.conversation.history_for_model()
        fit = fit_history(history, self._token_counter, self.client.server_info().ctx_per_slot, self._max_tokens(),
                          self.margin, history_share=self.history_share)
        self.last_fit = fit
        return fit

    def _open(self, fit: FitResult, read_timeout: float | None) -> ReplyStream:
        reply = self.client.prepare_stream(fit.messages, self.params, max_tokens=self._max_tokens(),
                                           read_timeout=read_timeout)
        self._reply = reply
        if self._stop_requested:
            raise _Stopped()
        reply.open()
        return reply

    def _with_loading_wait(self, call):
        """Run ``call``; while the server answers 503 (model loading) wait with a bounded backoff."""
        waited, delay, announced = 0.0, 0.25, False
        while True:
            if self._stop_requested:
                raise _Stopped()
            try:
                return call()
            except ServerLoading as loading:
                if waited >= self.loading_wait_s:
                    raise errors.loading(loading.request_id, waited, (loading.raw,)) from None
                if not announced:
                    announced = True
                    yield ChatEvent(WAITING, notice=T("The model is still loading; the message will be sent "
                                                      "as soon as it is ready.",
                                                      "模型仍在加载，就绪后会立即发送这条消息。"))
                self._sleep(delay)
                waited += delay
                delay = min(delay * 2, 2.0)

    def _counted_prompt(self, fit: FitResult) -> PromptProgress:
        """The prompt's size as we counted it: all that is known while a server that does not report progress
        reads it."""
        return counted(fit.prompt_tokens, estimate=self.counter is None or self.counter.is_estimate)

    def _stream_into(self, reply: ReplyStream, answer: Message) -> Iterator[ChatEvent]:
        last_save = time.monotonic()
        for piece in reply.items():
            if isinstance(piece, PromptProgress):
                yield ChatEvent(PROGRESS, progress=piece)
                continue
            answer.content += piece
            yield ChatEvent(DELTA, text=piece)
            if time.monotonic() - last_save > _SAVE_EVERY_S:
                self.save()  # so even a crash of this app keeps most of the partial answer
                last_save = time.monotonic()

    def _finish_answer(self, user: Message, answer: Message, fit: FitResult, *, retried: bool) -> ReplyStats:
        assert self._reply is not None  # _open set it for this answer
        stats = self._reply.stats
        stats.trimmed_messages = fit.dropped_messages
        stats.retried_after_overflow = retried
        if stats.prompt_tokens:
            self._token_counter.observe(fit.messages, stats.prompt_tokens)
        self._attribute_length(stats, answer, fit)
        stopped = stats.finish_reason == FINISH_STOPPED
        if stopped and not answer.content:
            self._drop(answer)  # nothing came back: the message stays pending, ready to re-send
        else:
            answer.status = STOPPED if stopped else COMPLETE
            answer.stats = stats.to_dict("en")
            user.status = ANSWERED
        self.save()
        return stats

    def _attribute_length(self, stats: ReplyStats, answer: Message, fit: FitResult) -> None:
        """Which limit ended a "length" answer (the answer's maximum or the context), with the server's context.
        Only a "length" finish asks the server anything: an answer cut by a dying server must not ask it again."""
        if stats.finish_reason != FINISH_LENGTH:
            return
        try:
            stats.n_ctx = self.client.server_info().ctx_per_slot
        except (errors.ChatError, ServerLoading):
            logger.info("the server's context could not be read after a 'length' finish; told apart by tokens only")
        exact = stats.tokens_source == "server"
        completion = stats.completion_tokens
        if not exact and stats.finish_reason == FINISH_LENGTH and not self._token_counter.is_estimate:
            completion = max(completion, self._tokens_in(answer.content))
        prompt = stats.prompt_tokens if stats.prompt_tokens is not None else fit.prompt_tokens
        stats.attribute_length(prompt, completion, exact=exact)

    def _tokens_in(self, text: str) -> int:
        """The answer's tokens as the server counts them (0 when it can no longer say: the piece count stands)."""
        try:
            return self._token_counter.count_text(text)
        except (errors.ChatError, ServerLoading):
            logger.info("the answer's tokens could not be counted by the server; using the streamed pieces")
            return 0

    def _absorb_overflow(self, overflow: ContextOverflow, fit: FitResult) -> None:
        self._token_counter.observe(fit.messages, overflow.n_prompt_tokens)
        if overflow.n_ctx:
            self.client.learn_ctx(overflow.n_ctx)

    def _overflow_error(self, overflow: ContextOverflow, fit: FitResult) -> errors.ChatError:
        ctx = overflow.n_ctx or self.client.server_info().ctx_per_slot or 0
        return errors.message_too_long(overflow.n_prompt_tokens, fit.budget or ctx, ctx, self._max_tokens(),
                                       overflow.request_id)

    def _drop(self, answer: Message | None) -> None:
        if answer is not None and answer in self.conversation.messages and not answer.content:
            self.conversation.messages.remove(answer)

    def _keep_partial(self, answer: Message | None) -> None:
        if answer is not None and answer.content:
            answer.status = INTERRUPTED
        else:
            self._drop(answer)
        self.save()
