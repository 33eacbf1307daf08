"""Reading a failed or finished attempt: is it "too big for this machine", and what did llama.cpp reserve?"""

from __future__ import annotations

import re
from typing import Any

from app.core.text import T, Text

# failures that mean "too big for this machine" (the search moves down); the probe retries only transient ones.
# A load that never becomes ready (swapping) and an mmap refused under a memory cap count as too big, and so does one
# whose speed collapsed because the driver spilled it into shared system memory ("gpu_spilled", spill.py).
MEMORY_CAUSES = frozenset({"gpu_out_of_memory", "context_out_of_memory", "ram_out_of_memory", "oom_killed",
                           "killed", "margin", "timeout", "ready_timeout", "mmap_failed", "gpu_spilled"})
# Signs of memory exhaustion that a generic crash diagnosis does not name: under a memory cap, thread
# creation fails with EAGAIN ("Resource temporarily unavailable"), a prompt answers HTTP 500
# "decode() failed: std::bad_alloc", and allocators print these.
MEMORY_HINTS = ("Resource temporarily unavailable", "Thread creation failed", "insufficient memory",
                "std::bad_alloc", "Cannot allocate memory", "failed to allocate")
# llama.cpp reports each reserved buffer, e.g. "sched_reserve:        CPU compute buffer size =   283.01 MiB"
_CPU_COMPUTE_LINE = re.compile(r"\bCPU compute buffer size\s*=\s*([\d.]+)\s*MiB")
_PROJECTOR_COMPUTE = "reserve_compute_meta:"  # tools/mtmd/clip.cpp, the projector's image compute buffer


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
    """The CPU compute buffer llama.cpp reserved (llama-cpp-python logs it; llama-server only when verbose).

    A vision projector's own buffer (``reserve_compute_meta: CPU compute buffer size``, printed after the model's)
    is not the model's and is left out.
    """
    sizes = [float(m.group(1)) for line in log_lines
             if _PROJECTOR_COMPUTE not in line and (m := _CPU_COMPUTE_LINE.search(line))]
    return int(sizes[-1] * 1024 * 1024) if sizes else None


def prompt_failure(error: Any, log_lines: list[str], config: Any = None, timeout_s: float = 0.0) -> tuple[str, Text]:
    """Why the test prompt failed, as (cause, sentence), when the supervisor diagnosed no crash.

    The server's own log is read first, with the crash decoder's signatures: its diagnosis is the plain reason
    (out of memory, an assertion, an error in the built-in server). Without one, the sentence says how the request
    failed in words (``error`` is a :class:`~app.core.probe.request.RequestFailed`); never an exception's class name.
    The cause stays "request" (tried once more) unless the log shows the settings need more memory than there is.
    """
    from app.core.diagnosis.diagnose import diagnose
    from app.core.diagnosis.signatures import find_hits
    from app.core.diagnosis.situation import prefixed

    if find_hits(log_lines):
        diagnosis = diagnose(None, log_lines, config, was_ready=True)
        cause = diagnosis.cause if diagnosis.cause in MEMORY_CAUSES else "request"
        return cause, prefixed("The model loaded, but the test prompt failed: ",
                               "模型已加载，但测试提示失败：", diagnosis.message)
    kind = getattr(error, "kind", None)
    if kind == "timeout":
        return "request", T("The model loaded, but the test prompt got no answer within {s:.0f} s.",
                            "模型已加载，但测试提示在 {s:.0f} 秒内没有得到回答。", s=timeout_s)
    if kind == "http":
        return "request", T("The model loaded, but the server answered the test prompt with an error (HTTP {status}): "
                            "{message}", "模型已加载，但服务器对测试提示返回了错误（HTTP {status}）：{message}",
                            status=error.status, message=error.server_message or "-")
    if kind == "answer":
        return "request", T("The model loaded, but its answer to the test prompt could not be read.",
                            "模型已加载，但无法读取它对测试提示的回答。")
    return "request", T("The model loaded, but the server broke off the test prompt without an answer, and its log "
                        "names no reason.",
                        "模型已加载，但服务器在测试提示中途断开、没有回答，它的日志里也没有写明原因。")
