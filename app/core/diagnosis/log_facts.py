"""Numbers and phases read from a server log: layer counts, context size, failed allocation sizes, readiness."""

from __future__ import annotations

import re
from dataclasses import dataclass

_MIB = 1024 * 1024

_N_LAYER = re.compile(r"\bn_layer\s*=\s*(\d+)")
_OFFLOADED = re.compile(r"offloaded (\d+)/(\d+) layers to GPU")
_N_CTX = re.compile(r"\bn_ctx\s*=\s*(\d+)")
_ALLOC_MIB = re.compile(r"allocating ([\d.]+) MiB on device (\d+)")
_ALLOC_BYTES = re.compile(r"failed to allocate (\w+) buffer of size (\d+)")
_FREE_MIB = re.compile(r"using device (\w+) \(([^)]*)\).* - (\d+) MiB free")
# ggml's system_info line: "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | ..."
_SYSTEM_INFO = re.compile(r"\bCPU\s*:\s*((?:\w+\s*=\s*\d+\s*\|\s*)+)")
_SYSTEM_INFO_FLAG = re.compile(r"(\w+)\s*=\s*1\b")
_PORT = re.compile(r"port[:= ]\s*(\d{1,5})\b|\('[^']*', (\d{1,5})\)")

# Lines that appear only once a server has finished loading and serves (or is about to).
READY_MARKERS = (
    "model loaded", "uvicorn running on", "application startup complete", "all slots are idle",
    "starting the main loop", "log_server_r", "launch_slot_", '"post /v1',
)
# Lines printed while the model is still being read or set up.
LOADING_MARKERS = (
    "llama_model_loader", "load_tensors", "llm_load", "print_info", "loading model", "llama_context",
    "llama_kv_cache", "llama_model_load", "warming up", "ggml_cuda_init", "load_backend",
)


@dataclass(frozen=True)
class LogFacts:
    n_layer: int | None = None
    offloaded_layers: int | None = None
    offload_total: int | None = None
    n_ctx: int | None = None
    failed_alloc_bytes: int | None = None
    failed_alloc_device: str | None = None
    gpu_free_bytes: int | None = None
    gpu_name: str | None = None
    port: int | None = None
    was_ready: bool | None = None  # True: served; False: never got past loading; None: cannot tell
    saw_loading: bool = False
    cpu_features: tuple[str, ...] = ()  # what the engine was compiled to use, as its system_info line names it


def _last(pattern: re.Pattern[str], lines: list[str]) -> re.Match[str] | None:
    for line in reversed(lines):
        match = pattern.search(line)
        if match:
            return match
    return None


def _failed_allocation(lines: list[str]) -> tuple[int | None, str | None]:
    match = _last(_ALLOC_MIB, lines)
    if match:
        return int(float(match.group(1)) * _MIB), f"GPU {match.group(2)}"
    match = _last(_ALLOC_BYTES, lines)
    if match:
        return int(match.group(2)), match.group(1)
    return None, None


def _readiness(lowered: list[str]) -> tuple[bool | None, bool]:
    ready = any(marker in line for line in lowered for marker in READY_MARKERS)
    loading = any(marker in line for line in lowered for marker in LOADING_MARKERS)
    if ready:
        return True, loading
    return (False if loading else None), loading


def _cpu_features(lines: list[str]) -> tuple[str, ...]:
    match = _last(_SYSTEM_INFO, lines)
    return tuple(_SYSTEM_INFO_FLAG.findall(match.group(1))) if match else ()


def read_log_facts(lines: list[str]) -> LogFacts:
    n_layer = _last(_N_LAYER, lines)
    offloaded = _last(_OFFLOADED, lines)
    n_ctx = _last(_N_CTX, lines)
    free = _last(_FREE_MIB, lines)
    port = _last(_PORT, lines)
    alloc_bytes, alloc_device = _failed_allocation(lines)
    was_ready, saw_loading = _readiness([line.lower() for line in lines])
    return LogFacts(
        n_layer=int(n_layer.group(1)) if n_layer else None,
        offloaded_layers=int(offloaded.group(1)) if offloaded else None,
        offload_total=int(offloaded.group(2)) if offloaded else None,
        n_ctx=int(n_ctx.group(1)) if n_ctx else None,
        failed_alloc_bytes=alloc_bytes,
        failed_alloc_device=alloc_device,
        gpu_free_bytes=int(free.group(3)) * _MIB if free else None,
        gpu_name=free.group(2) if free else None,
        port=int(port.group(1) or port.group(2)) if port else None,
        was_ready=was_ready,
        saw_loading=saw_loading,
        cpu_features=_cpu_features(lines),
    )
