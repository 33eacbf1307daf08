"""The crash decoder: why the server stopped, in one plain sentence (English and Chinese), with a fix as data.

Public API:
- ``diagnose(returncode, log_lines, config=None, *, oom_evidence=None, rss_samples=(), block_count=None,
  was_ready=None, memory_limit=None, plan=None, engine=None) -> Diagnosis`` (``rss_samples``: MemorySample
  readings; ``engine``: ``EngineFacts``, what the caller knows of the engine and processor, for an illegal instruction
  — ``is_illegal_instruction(returncode)`` says when it is needed)
- ``diagnose_timeout(seconds, log_lines, config=None)``, ``diagnose_start_failure(exc, argv=None, config=None)``
- ``decode_exit_status(code) -> ExitStatus(exit_code, signal, meaning)``
- ``snapshot_oom_counters()`` before start, ``oom_evidence_since(before, pid)`` after death -> ``OomEvidence``
- ``CAUSES`` (every cause id), ``MEMORY_CAUSES`` (the ones that mean "needs less memory")

Modules: exit_status/exit_meanings (codes), signatures (log lines), log_facts (numbers in the log),
oom_evidence/cgroup/rss_trend (Linux OOM killer), memory_evidence (was memory short at a kill?),
fixes (config changes), causes_* (sentences per cause), diagnose (the decision), not_started (timeouts, failed
starts), value (the Diagnosis dataclass).
"""

from app.core.diagnosis.diagnose import MEMORY_CAUSES, diagnose, is_illegal_instruction
from app.core.diagnosis.memory_evidence import MemorySample
from app.core.diagnosis.not_started import diagnose_start_failure, diagnose_timeout
from app.core.diagnosis.oom_evidence import OomCounters, OomEvidence, oom_evidence_since, snapshot_oom_counters
from app.core.diagnosis.situation import EngineFacts
from app.core.diagnosis.value import Diagnosis
from app.core.process.exit_status import ExitStatus, decode_exit_status, parse_exit_code

# Every cause id a Diagnosis can carry (stable: UIs and tests key on them).
CAUSES = (
    "not_gguf", "gguf_too_old", "gguf_too_new", "model_truncated", "model_corrupt", "unsupported_architecture",
    "unsupported_quant_type", "wrong_split_part", "split_part_missing", "model_incompatible", "model_not_found",
    "model_unreadable", "mmap_failed", "projector_failed",
    "model_load_failed", "gpu_out_of_memory", "context_out_of_memory", "ram_out_of_memory", "oom_killed", "killed",
    "killed_from_outside", "context_rejected",
    "port_in_use", "host_unavailable", "bad_argument", "gpu_driver_problem", "gpu_error", "missing_library",
    "library_incompatible", "illegal_instruction", "assertion_failed", "python_error", "crashed", "bus_error",
    "stopped_externally", "exited_early", "unknown", "ready_timeout", "missing_binary", "permission_denied",
    "not_executable", "start_failed", "memory_watchdog", "gpu_offload_short",
    "worker_lost", "worker_unreachable", "worker_version", "worker_out_of_memory", "worker_port_in_use",
    "engine_files_missing", "vc_runtime_missing", "dll_version", "app_control_blocked", "port_reserved",
    "engine_quarantined",
    "cuda_runtime_missing", "cuda_driver_too_old", "cuda_card_unsupported", "cuda_no_device", "cuda_init_failed",
)

__all__ = [
    "CAUSES", "MEMORY_CAUSES", "Diagnosis", "EngineFacts", "ExitStatus", "MemorySample", "OomCounters", "OomEvidence",
    "decode_exit_status", "diagnose", "is_illegal_instruction",
    "diagnose_start_failure", "diagnose_timeout", "oom_evidence_since", "parse_exit_code", "snapshot_oom_counters",
]
