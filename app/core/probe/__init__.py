"""Live probe: prove safe GPU layers and context with real loads in child processes.

Public API: ``run_probe(info, config, hw, ProbeOptions(...)) -> ProbeResult`` (probe.py), the pure search
(search.py), one attempt (attempt.py) and the result cache (cache.py).
"""

from app.core.probe.attempt import Attempt, AttemptLimits, ProbeCancelled, run_attempt
from app.core.probe.probe import ProbeOptions, run_probe
from app.core.probe.result import ProbeProgress, ProbeResult, Recommendation
from app.core.probe.search import SearchResult, max_loads, search_highest

__all__ = [
    "Attempt", "AttemptLimits", "ProbeCancelled", "ProbeOptions", "ProbeProgress", "ProbeResult", "Recommendation",
    "SearchResult",
    "max_loads", "run_attempt", "run_probe", "search_highest",
]
