"""One probe attempt: start the real server in a child process with a candidate config, prove it works, stop it.

Passing means: the model loads at the full ctx within the time limit, one prompt of at least one
micro-batch is evaluated and a few tokens generated, and afterwards each device still has its safety
margin free, RAM judged as it will be with the context full (full_context.py). The child is always stopped
before this returns (also on cancel).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.launch.config import BACKEND_LLAMA_SERVER, LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.plan.budget import Margins
from app.core.probe.evidence import MEMORY_CAUSES, blamed_cause, prompt_failure, reported_cpu_compute_bytes
from app.core.probe.full_context import FullContextProjector
from app.core.probe.margins import FreeNow, RamUse, margin_problem, read_free_now
from app.core.probe.request import RequestFailed, evaluate_once
from app.core.probe.sampler import PeakSampler
from app.core.problem import UserError
from app.core.text import T, Text

if TYPE_CHECKING:
    from app.core.diagnosis.value import Diagnosis
    from app.core.launch.backends import BackendInfo
    from app.core.server.supervisor import Supervisor

logger = logging.getLogger(__name__)

POLL_S = 0.05
CRASH_REPORT_WAIT_S = 15.0  # for the diagnosis of a child that is already gone (it is sure to come)
LOG_LINES_KEPT = 400  # of each attempt's server log, for the Logs tab (the whole log is in its file)


class ProbeCancelled(UserError):
    """Raised when the caller cancels; the child has already been stopped."""

    def __init__(self) -> None:
        super().__init__(T("The probe was cancelled; no server is left running.",
                           "探测已取消；没有留下正在运行的服务器。"))


@dataclass(frozen=True)
class AttemptLimits:
    load_timeout_s: float = 600.0
    request_timeout_s: float = 300.0
    margins: Margins = field(default_factory=Margins)
    ram_budget: int | None = None  # judge RAM against this instead of what the machine has free
    vram_budget: int | None = None  # judge VRAM against this (peak VRAM of the child must leave the margin)
    rlimits: dict[int, int] | None = None  # hard caps applied to the child (tests, "8 GB board" drills)
    # what a full context adds to the measured RAM (the plan's growth); None: only the CPU compute buffer
    # llama.cpp reported is added, as if none of it had been touched
    full_context: FullContextProjector | None = None


@dataclass
class Attempt:
    gpu_layers: int
    ctx: int
    ok: bool = False
    peak_rss_bytes: int | None = None
    peak_vram_bytes: int | None = None
    seconds: float = 0.0  # wall time of the whole attempt (start to stopped)
    load_seconds: float | None = None
    cause: str | None = None  # None when ok; a diagnosis cause id, "margin", "timeout", "request"
    reason: Text | None = None
    diagnosis: Diagnosis | None = None  # when the server crashed
    prompt_tokens: int | None = None
    # CPU compute buffer llama.cpp reserved (when its log says): only the part a short prompt touches is
    # resident, but a full context touches all of it
    cpu_compute_reserved_bytes: int | None = None
    # RAM projected with the context full: the measured peak plus what the rest of the context adds (None: the
    # attempt did not pass its test prompt, or was stored before this was judged)
    full_context_rss_bytes: int | None = None
    n_cpu_moe: int = 0  # leading layers whose experts stayed in RAM (mixture-of-experts placement)
    # speeds the server measured on the test request (llama-server's own timings; None when it does not say)
    prompt_tps: float | None = None
    generation_tps: float | None = None
    generated_tokens: int | None = None  # the tokens generation_tps was measured on (the spill rule needs enough)
    # the last lines of this attempt's server log, for the window's Logs tab (not stored with the result)
    log_lines: tuple[str, ...] = field(default=(), repr=False, compare=False)

    @property
    def memory_related(self) -> bool:
        return self.cause in MEMORY_CAUSES

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        diagnosis = None
        if self.diagnosis is not None:
            diagnosis = self.diagnosis.to_dict(lang)
        elif self.reason is not None:
            diagnosis = {"cause": self.cause, "message": self.reason.render(lang)}
        return {"gpu_layers": self.gpu_layers, "ctx": self.ctx, "ok": self.ok,
                "peak_rss_bytes": self.peak_rss_bytes, "peak_vram_bytes": self.peak_vram_bytes,
                "seconds": round(self.seconds, 3), "load_seconds": self.load_seconds,
                "prompt_tokens": self.prompt_tokens, "cpu_compute_reserved_bytes": self.cpu_compute_reserved_bytes,
                "full_context_rss_bytes": self.full_context_rss_bytes,
                "cause": self.cause, "diagnosis": diagnosis, "n_cpu_moe": self.n_cpu_moe,
                "prompt_tps": self.prompt_tps, "generation_tps": self.generation_tps,
                "generated_tokens": self.generated_tokens}


def is_cancelled(cancel: Any) -> bool:
    if cancel is None:
        return False
    if hasattr(cancel, "is_set"):
        return bool(cancel.is_set())
    return bool(cancel())


def _vram_reader() -> Callable[[int], int | None] | None:
    try:
        from app.core.hardware.scan import process_vram_bytes
    except ImportError:
        logger.warning("no VRAM reader: peaks are measured without VRAM", exc_info=True)
        return None
    return process_vram_bytes


def _wait_ready(supervisor: Any, limits: AttemptLimits, cancel: Any) -> bool:
    from app.core.server.supervisor import State

    final = {State.READY, State.FAILED, State.CRASHED, State.STOPPED}
    deadline = time.monotonic() + limits.load_timeout_s
    while time.monotonic() < deadline:
        if is_cancelled(cancel):
            raise ProbeCancelled()
        state = supervisor.wait_for(final, POLL_S * 4)
        if state in final:
            return state == State.READY
    return False


def run_attempt(config: LaunchConfig, limits: AttemptLimits, *, cancel: Any = None,
                backend: BackendInfo | None = None) -> Attempt:
    """Load ``config`` (its gpu_layers and ctx are the candidate) in a child and judge it; ``backend``: the engine
    already looked up for ``config`` (looked up again when None)."""
    from app.core.server.supervisor import Supervisor

    config = config.with_changes(host="127.0.0.1", port=find_free_port("127.0.0.1"), api_key=None)
    attempt = Attempt(config.gpu_layers, config.ctx, n_cpu_moe=config.n_cpu_moe)
    started = time.monotonic()
    supervisor = Supervisor(config, auto_restart=False, rlimits=limits.rlimits, ready_timeout_s=limits.load_timeout_s,
                            log_name=f"probe-{Path(config.model).stem}", backend=backend)
    sampler = PeakSampler(lambda: supervisor.pid, _vram_reader())
    try:
        with sampler:
            supervisor.start()
            ready = _wait_ready(supervisor, limits, cancel)
            if ready:
                attempt.load_seconds = supervisor.load_seconds
                attempt.cpu_compute_reserved_bytes = _reported_cpu_compute(supervisor)
                _exercise(supervisor, config, limits, attempt, cancel)
            else:
                _record_load_failure(supervisor, limits, attempt, started)
            sampler.sample_now()
            free_now = read_free_now() if attempt.ok else None
    finally:
        supervisor.close()
    attempt.log_lines = tuple(entry.text for entry in supervisor.tail(LOG_LINES_KEPT))
    attempt.peak_rss_bytes = sampler.peak_rss_bytes or None
    attempt.peak_vram_bytes = sampler.peak_vram_bytes
    if attempt.ok:
        _judge_margins(attempt, config, limits, free_now)
    attempt.seconds = time.monotonic() - started
    return attempt


def _reported_cpu_compute(supervisor: Any) -> int | None:
    return reported_cpu_compute_bytes([entry.text for entry in supervisor.tail(400)])


def full_context_growth(attempt: Attempt, config: LaunchConfig, limits: AttemptLimits) -> int:
    """RAM the server adds over the measured peak once the context is full (full_context.py)."""
    if limits.full_context is not None:
        return limits.full_context.growth_bytes(config, attempt.prompt_tokens or 0, attempt.cpu_compute_reserved_bytes)
    return attempt.cpu_compute_reserved_bytes or 0


def _judge_margins(attempt: Attempt, config: LaunchConfig, limits: AttemptLimits, free_now: FreeNow | None) -> None:
    measured = attempt.peak_rss_bytes or 0
    attempt.full_context_rss_bytes = measured + full_context_growth(attempt, config, limits)
    ram = RamUse(measured, attempt.full_context_rss_bytes, attempt.prompt_tokens or 0)
    problem = margin_problem(ram, attempt.peak_vram_bytes, limits.margins,
                             ram_budget=limits.ram_budget, vram_budget=limits.vram_budget, free_now=free_now,
                             uses_gpu=config.gpu_layers != 0)
    if problem is not None:
        attempt.ok, attempt.cause, attempt.reason = False, "margin", problem


def _exercise(supervisor: Any, config: LaunchConfig, limits: AttemptLimits, attempt: Attempt, cancel: Any) -> None:
    """The test prompt, on a worker thread so a cancel is honoured while a long prompt is evaluated."""
    outcome: dict[str, Any] = {}

    def request() -> None:
        try:
            outcome["evaluation"] = evaluate_once(supervisor.url, supervisor.backend.tokenize_path, config.ubatch,
                                                  config.ctx, limits.request_timeout_s,
                                                  ignore_eos=config.backend == BACKEND_LLAMA_SERVER,
                                                  api_key=supervisor.api_key)
        except RequestFailed as error:
            outcome["error"] = error

    worker = threading.Thread(target=request, name="probe-request", daemon=True)
    worker.start()
    while worker.is_alive():
        if is_cancelled(cancel):
            supervisor.stop()  # the request then fails at once
            raise ProbeCancelled()
        worker.join(POLL_S * 2)
    if "evaluation" in outcome:
        evaluation = outcome["evaluation"]
        attempt.prompt_tokens, attempt.ok = evaluation.prompt_tokens, True
        attempt.prompt_tps, attempt.generation_tps = evaluation.prompt_tps, evaluation.generation_tps
        attempt.generated_tokens = evaluation.generated_tokens
        return
    error = outcome.get("error")
    if error is not None and error.server_gone:
        _wait_for_crash_report(supervisor)
    diagnosis = supervisor.last_diagnosis
    attempt.diagnosis = diagnosis
    if diagnosis is not None:  # the server died during the prompt: say why in the crash diagnosis' words
        attempt.cause, attempt.reason = diagnosis.cause, diagnosis.message
    else:  # it still runs, or its crash report is late: its log says why, in the crash decoder's words
        logger.info("probe attempt (%d GPU layers, ctx %d): the test prompt failed: %s; server log: %s",
                    attempt.gpu_layers, attempt.ctx, error, getattr(getattr(supervisor, "log", None), "path", "?"))
        # the raw detail (an exception's name and text) goes to the app's log only, never into the sentence
        log_lines = [entry.text for entry in supervisor.tail(400)]
        attempt.cause, attempt.reason = prompt_failure(error, log_lines, config, limits.request_timeout_s)
    _blame_memory_when_evident(supervisor, attempt, str(error or ""))


def _wait_for_crash_report(supervisor: Supervisor) -> None:
    """Let the supervisor diagnose the crash: briefly while the child still runs (the connection may have broken
    for another reason), longer once it is gone, since a busy machine can take a while to report it."""
    from app.core.server.supervisor import State

    crashed = {State.CRASHED, State.FAILED}
    if supervisor.wait_for(crashed, 2.0) in crashed:
        return
    child = supervisor.child
    if child is not None and not child.running:
        supervisor.wait_for(crashed, CRASH_REPORT_WAIT_S)


def _blame_memory_when_evident(supervisor: Any, attempt: Attempt, error: str = "") -> None:
    attempt.cause = blamed_cause(attempt.cause, [entry.text for entry in supervisor.tail(80)], error)


def _record_load_failure(supervisor: Any, limits: AttemptLimits, attempt: Attempt, started: float) -> None:
    diagnosis = supervisor.last_diagnosis
    if diagnosis is not None:
        attempt.cause, attempt.diagnosis, attempt.reason = diagnosis.cause, diagnosis, diagnosis.message
        _blame_memory_when_evident(supervisor, attempt)
        return
    if time.monotonic() - started >= limits.load_timeout_s:
        attempt.cause = "timeout"
        attempt.reason = T("The model did not finish loading within {s:.0f} s.",
                           "模型没有在 {s:.0f} 秒内加载完。", s=limits.load_timeout_s)
    else:
        attempt.cause = "failed"
        attempt.reason = T("The server stopped before it was ready.", "服务器在就绪之前就停止了。")
