"""llama.cpp's own memory numbers for a config, beside the plan (issue 12, "side by side with llama.cpp's own dry
run"): the real llama-server loads the model with the app's own command line plus ``-lv 4`` (its breakdown tables
are trace-level lines), is stopped cleanly once Ready so it prints the table for the context it really ran, and its
log is read by ``app.core.plan.llama_report``. The built-in engine prints no such table: None.

``compare(plan, report)`` puts both side by side on the same terms: the plan's RAM weights + KV + compute against
llama.cpp's host model + context + compute (+ CPU_REPACK copies), the process overhead left out of both.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from app.core.launch.config import BACKEND_LLAMA_SERVER, LaunchConfig
from app.core.plan.llama_report import LlamaReport, parse_llama_log
from app.core.server.events import State
from app.core.server.supervisor import Supervisor

logger = logging.getLogger(__name__)

MiB = 1024 * 1024
LOAD_WITHIN_S = 300.0
DISAGREE_FRACTION = 0.10  # the line: beyond it, the probe decides


def llama_cpp_report(config: LaunchConfig, *, load_within_s: float = LOAD_WITHIN_S) -> LlamaReport | None:
    """Load ``config`` in the real llama-server once and read its own numbers; None for the built-in engine or a
    server that never became Ready (the log is still parsed: a load that failed may have printed its fit table)."""
    if config.backend != BACKEND_LLAMA_SERVER:
        return None
    verbose = config.with_changes(extra_args=(*config.extra_args, "-lv", "4"), port=0, api_key=None)
    supervisor = Supervisor(verbose, auto_restart=False, log_name="llama-cpp-numbers")
    try:
        supervisor.start()
        state = supervisor.wait_for({State.READY, State.FAILED}, load_within_s)
        if state is not State.READY:
            logger.info("llama.cpp's numbers: the server did not become ready (%s)", state.value)
    finally:
        supervisor.close()  # a clean stop: llama-server prints the table of the context it ran
    return parse_llama_log(line.text for line in supervisor.tail(20_000))


@dataclass(frozen=True)
class SideBySide:
    plan_mib: float  # the plan's RAM weights + KV + compute
    llama_mib: float  # llama.cpp's host model + context + compute (+ repacked weights)
    parts: dict[str, tuple[float, float]]  # name -> (plan MiB, llama.cpp MiB)

    @property
    def difference(self) -> float:
        """(plan − llama.cpp) / llama.cpp: positive means the plan asks for more."""
        return (self.plan_mib - self.llama_mib) / self.llama_mib if self.llama_mib else 0.0

    @property
    def disagrees(self) -> bool:
        """Apart by more than 10 %, after the table's own rounding: llama.cpp prints whole MiB rounded down, so
        each of its parts may be up to 1 MiB more than it says (what matters on tiny models only)."""
        rounding = float(len(self.parts))
        return abs(self.plan_mib - self.llama_mib) > DISAGREE_FRACTION * self.llama_mib + rounding

    def to_dict(self) -> dict[str, Any]:
        return {"plan_mib": round(self.plan_mib, 1), "llama_cpp_mib": round(self.llama_mib, 1),
                "difference_percent": round(100 * self.difference, 1), "disagrees": self.disagrees,
                "rounding_mib": float(len(self.parts)),
                "parts": {k: {"plan_mib": round(p, 1), "llama_cpp_mib": round(q, 1)} for k, (p, q) in
                          self.parts.items()}}


def compare(plan: Any, report: LlamaReport) -> SideBySide | None:
    """The CPU-only case (what this machine can check): the plan's RAM device against llama.cpp's host rows."""
    if report.latest is None:
        return None
    ram = plan.device("RAM")
    plan_parts = {"model": ram.weights_bytes / MiB, "context": ram.kv_bytes / MiB, "compute": ram.compute_bytes / MiB}
    llama_parts = {"model": float(report.model_mib or 0) + float(report.repack_mib or 0),
                   "context": float(report.context_mib or 0), "compute": float(report.compute_mib or 0)}
    parts = {name: (plan_parts[name], llama_parts[name]) for name in plan_parts}
    return SideBySide(sum(plan_parts.values()), sum(llama_parts.values()), parts)
