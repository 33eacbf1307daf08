"""Multi-turn self-test (field report 000's advice): "hit it five rounds, print the history size each
round; then one long answer".

Each round adds a message of about a fifth of the context, so on a small context the naive history
overflows by round five; the guard must trim it and every round must still be answered.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit

import psutil

from app.core.chat import errors
from app.core.chat.classify import ServerLoading
from app.core.chat.client import ChatClient, ServerInfo
from app.core.chat.params import ChatParams
from app.core.chat.session import DONE, ERROR, TRIMMED, ChatSession

logger = logging.getLogger(__name__)

_SENTENCE = "Round {n}: tell me more about the river, the boats and the weather on the water. "
_LONG_REQUEST = "Now write one long answer: describe the whole journey down the river in detail. "
FALLBACK_CTX = 2048
LOADING_WAIT_S = 300.0
# a round that failed so leaves no server to answer the next one (the self-test never restarts it)
SERVER_GONE = frozenset({errors.SERVER_CRASHED, errors.UNREACHABLE})


@dataclass
class RoundReport:
    round: int
    kind: str  # "round" | "long"
    messages_in_history: int
    messages_sent: int
    prompt_tokens: int | None
    prompt_tokens_source: str  # "server" (usage) or "counted" (our count of what was sent)
    naive_prompt_tokens: int
    trimmed_messages: int
    ttft_s: float | None
    tokens_per_s: float | None
    completion_tokens: int
    finish_reason: str | None
    finish_text: str
    server_rss_bytes: int | None
    ok: bool
    error: dict[str, Any] | None = None
    notices: list[str] = field(default_factory=list)


@dataclass
class SelftestReport:
    url: str
    backend: str
    ctx_per_slot: int | None
    rounds: list[RoundReport]
    skipped_rounds: int = 0  # rounds not run because the server was gone
    remote: dict[str, Any] | None = None  # what a server this app did not start said about itself (--url)

    @property
    def passed(self) -> bool:
        return bool(self.rounds) and all(r.ok for r in self.rounds)

    @property
    def naive_overflowed(self) -> bool:
        """Whether the untrimmed history grew past the context (the case the guard exists for)."""
        return bool(self.ctx_per_slot) and any(r.naive_prompt_tokens > self.ctx_per_slot for r in self.rounds)

    def to_dict(self) -> dict[str, Any]:
        return {"url": self.url, "backend": self.backend, "ctx_per_slot": self.ctx_per_slot, "passed": self.passed,
                "naive_overflowed": self.naive_overflowed, "skipped_rounds": self.skipped_rounds,
                "rounds": [asdict(r) for r in self.rounds], "remote": self.remote}


def server_pid_for(url: str) -> int | None:
    """The pid listening on the URL's port, when the OS lets us see it; None for a server on another computer."""
    from app.core.launch.ports import is_loopback

    parts = urlsplit(url)
    port = parts.port
    if not is_loopback(parts.hostname or ""):
        return None  # a local process on the same port number is not that server
    try:
        for conn in psutil.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and conn.pid:
                return conn.pid
    except (psutil.Error, OSError) as error:  # AccessDenied on macOS without root: memory goes unreported
        logger.debug("listening pid of port %s unknown: %s", port, error)
    return None


def rss_of(pid: int | None) -> int | None:
    if pid is None:
        return None
    try:
        return psutil.Process(pid).memory_info().rss
    except psutil.Error:
        return None


def message_of_tokens(client: ChatClient, n: int, target_tokens: int) -> str:
    sentence = _SENTENCE.format(n=n)
    tokens = client.tokenize(sentence)
    per_sentence = len(tokens) if tokens else max(1, len(sentence) // 3)
    return sentence * max(1, round(target_tokens / per_sentence))


def run_selftest(client: ChatClient, *, rounds: int = 5, long_answer: bool = True, server_pid: int | None = None,
                 seed: int = 42, progress: Callable[[RoundReport], None] | None = None,
                 loading_wait_s: float = LOADING_WAIT_S, sleep: Callable[[float], None] = time.sleep) -> SelftestReport:
    """Run the rounds. Raises ChatError when the server cannot even be asked its context and token counts
    (e.g. it died right after it became ready); a server that goes away during the rounds ends them early,
    with that round's classified error in the report and the rest counted in ``skipped_rounds``."""
    info = _server_info_once_loaded(client, loading_wait_s, sleep)
    ctx = info.ctx_per_slot or FALLBACK_CTX
    session = ChatSession(client, params=ChatParams(seed=seed, max_tokens=max(16, min(256, ctx // 8))), save=False)
    pid = server_pid if server_pid is not None else server_pid_for(client.base_url)
    report = SelftestReport(client.base_url, info.backend, info.ctx_per_slot, [])
    plan = [("round", message_of_tokens(client, n, ctx // 5)) for n in range(1, rounds + 1)]
    if long_answer:
        plan.append(("long", _LONG_REQUEST))
    for index, (kind, text) in enumerate(plan, start=1):
        if kind == "long":
            session.conversation.params = session.params.with_changes(max_tokens=max(32, min(1024, ctx // 2)))
        result = _run_round(session, index, kind, text, pid)
        report.rounds.append(result)
        server_gone = result.error is not None and result.error.get("kind") in SERVER_GONE
        if not server_gone:  # no request: the info is cached, only a crash makes the client forget it
            report.ctx_per_slot = client.server_info().ctx_per_slot
        if progress is not None:
            progress(result)
        if server_gone:
            report.skipped_rounds = len(plan) - index
            break
    return report


def _server_info_once_loaded(client: ChatClient, wait_s: float, sleep: Callable[[float], None]) -> ServerInfo:
    """The server's info; while it answers "loading" (HTTP 503) wait with a bounded back-off, as a chat does."""
    waited, delay = 0.0, 0.25
    while True:
        try:
            return client.server_info()
        except ServerLoading as loading:
            if waited >= wait_s:
                raise errors.loading(loading.request_id, waited, (loading.raw,)) from None
            sleep(delay)
            waited += delay
            delay = min(delay * 2, 2.0)


def _run_round(session: ChatSession, index: int, kind: str, text: str, pid: int | None) -> RoundReport:
    stats, error, notices = None, None, []
    for event in session.send(text):
        if event.kind == TRIMMED and event.notice is not None:
            notices.append(event.notice.render("en"))
        elif event.kind == DONE:
            stats = event.stats
        elif event.kind == ERROR:
            error = event.error
    fit = session.last_fit
    return RoundReport(
        round=index, kind=kind,
        messages_in_history=len(session.conversation.history_for_model()),
        messages_sent=stats.messages_sent if stats else (len(fit.messages) if fit else 0),
        prompt_tokens=stats.prompt_tokens if stats and stats.prompt_tokens else (fit.prompt_tokens if fit else None),
        prompt_tokens_source="server" if stats and stats.prompt_tokens else "counted",
        naive_prompt_tokens=fit.naive_prompt_tokens if fit else 0,
        trimmed_messages=fit.dropped_messages if fit else 0,
        ttft_s=stats.ttft_s if stats else None,
        tokens_per_s=stats.tokens_per_s if stats else None,
        completion_tokens=stats.completion_tokens if stats else 0,
        finish_reason=stats.finish_reason if stats else None,
        finish_text=stats.finish_text().render() if stats else "",
        server_rss_bytes=rss_of(pid),
        ok=error is None and stats is not None,
        error=error.to_dict() if error else None,
        notices=notices,
    )
