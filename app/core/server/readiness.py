"""Readiness gate: the server is ready only when its readiness endpoint answers 200.

The time allowed grows with the model file (reading it from disk dominates) and, once one load has been
measured, follows the measured time instead of a guess.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

import httpx

logger = logging.getLogger(__name__)

POLL_INTERVAL_S = 0.05
BASE_LIMIT_S = 60.0
SECONDS_PER_GIB = 20.0  # a slow disk reads ~50 MiB/s
MAX_LIMIT_S = 1800.0
MEASURED_FACTOR = 5.0
MEASURED_MIN_S = 30.0


def ready_time_limit(model_path: str, measured_load_s: float | None = None, override_s: float | None = None) -> float:
    if override_s:
        return float(override_s)
    try:
        size_gib = os.path.getsize(model_path) / 2**30
    except OSError:  # the start itself reports an unreadable model
        logger.debug("size of %s unknown; the base time limit applies", model_path, exc_info=True)
        size_gib = 0.0
    by_size = min(MAX_LIMIT_S, BASE_LIMIT_S + SECONDS_PER_GIB * size_gib)
    if measured_load_s is None:
        return by_size
    return min(by_size, max(MEASURED_MIN_S, MEASURED_FACTOR * measured_load_s + 15.0))


@dataclass
class ReadinessSeen:
    """What the gate observed, for the timeout sentence: 'no answer', 'HTTP 503 (Loading model)' ..."""

    answered: bool = False
    last_status: int | None = None
    last_body: str = ""
    last_error: str = ""

    def describe(self) -> str:
        if self.last_status is not None:
            body = f" {self.last_body[:120]}" if self.last_body else ""
            return f"last answer: HTTP {self.last_status}{body}"
        return f"no HTTP answer ({self.last_error or 'connection refused'})"


class ReadinessProbe:
    def __init__(self, url: str, api_key: str | None = None):
        self.url = url
        self.seen = ReadinessSeen()
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.Client(timeout=httpx.Timeout(1.0, connect=0.5), headers=headers, trust_env=False)

    def check(self) -> str:
        """'ready' (200), 'loading' (it answers, not yet 200) or 'silent' (no HTTP answer)."""
        try:
            response = self.client.get(self.url)
        except httpx.HTTPError as error:
            self.seen.last_error = type(error).__name__
            return "silent"
        self.seen.answered = True
        self.seen.last_status = response.status_code
        self.seen.last_body = response.text.strip().replace("\n", " ")
        return "ready" if response.status_code == 200 else "loading"

    def close(self) -> None:
        self.client.close()


def listens_on(pid: int | None, port: int) -> bool | None:
    """Whether process ``pid`` (or a process it started) listens on ``port``: False when the server that answered
    there is another program; None when that cannot be told (the process is gone, or the system will not say)."""
    import psutil

    if pid is None:
        return None
    try:
        process = psutil.Process(pid)
        for each in (process, *process.children(recursive=True)):
            connections = getattr(each, "net_connections", None) or each.connections  # psutil < 6: connections
            if any(c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port for c in connections("inet")):
                return True
    except (psutil.Error, OSError):
        logger.debug("listening sockets of process %s unreadable", pid, exc_info=True)
        return None
    return False
