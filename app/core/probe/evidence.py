"""Reading a failed or finished attempt: is it "too big for this machine", and what did llama.cpp reserve?"""

from __future__ import annotations

import re

# failures that mean "too big for this machine" (the search moves down); the probe retries only transient ones.
# A load that never becomes ready (swapping) and an mmap refused under a memory cap count as too big.
MEMORY_CAUSES = frozenset({"gpu_out_of_memory", "context_out_of_memory", "ram_out_of_memory", "oom_killed",
                           "killed", "margin", "timeout", "ready_timeout", "mmap_failed"})
# Signs of memory exhaustion that a generic crash diagnosis does not name: under a memory cap, thread
# creation fails with EAGAIN ("Resource temporarily unavailable"), a prompt answers HTTP 500
# "decode() failed: std::bad_alloc", and allocators print these.
MEMORY_HINTS = ("Resource temporarily unavailable", "Thread creation failed", "insufficient memory",
                "std::bad_alloc", "Cannot allocate memory", "failed to allocate")
# llama.cpp reports each reserved buffer, e.g. "sched_reserve:        CPU compute buffer size =   283.01 MiB"
_CPU_COMPUTE_LINE = re.compile(r"\bCPU compute buffer size\s*=\s*([\d.]+)\s*MiB")


def memory_hint(lines: list[str]) -> str | None:
    """The last line that shows memory exhaustion, if any."""
    for line in reversed(lines):
        if any(hint in line for hint in MEMORY_HINTS):
            return line
    return None


def blamed_cause(cause: str | None, log_lines: list[str], error: str = "") -> str | None:
    """``cause``, or "ram_out_of_memory" when a generic failure's log or answer shows memory exhaustion."""
    if cause in MEMORY_CAUSES or cause is None:
        return cause
    return "ram_out_of_memory" if memory_hint(log_lines + [error]) is not None else cause


def reported_cpu_compute_bytes(log_lines: list[str]) -> int | None:
    """The CPU compute buffer llama.cpp reserved (llama-cpp-python logs it; llama-server only when verbose)."""
    sizes = [float(m.group(1)) for line in log_lines if (m := _CPU_COMPUTE_LINE.search(line))]
    return int(sizes[-1] * 1024 * 1024) if sizes else None
