"""Known last words of llama.cpp, llama-server and llama-cpp-python, matched line by line.

Each signature names a cause; when several match, the most specific wins (lowest rank): a CUDA
out-of-memory line beats the generic "failed to load model" line that always follows it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.core.diagnosis.cuda_signatures import CUDA_PATTERNS

# How many of the last log lines are searched; a crash prints its reason near the end.
SEARCH_WINDOW = 400


@dataclass(frozen=True)
class Signature:
    cause: str
    rank: int  # lower = more specific
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class SignatureHit:
    cause: str
    rank: int
    line: str
    match: re.Match[str]


def _sig(cause: str, rank: int, *patterns: str) -> list[Signature]:
    return [Signature(cause, rank, re.compile(p, re.IGNORECASE)) for p in patterns]


SIGNATURES: list[Signature] = [
    # --- the model file itself
    *_sig("not_gguf", 10, r"invalid magic characters", r"bad file magic", r"unknown magic", r"not a gguf file",
          r"failed to read magic"),
    *_sig("gguf_too_old", 10, r"GGUFv1 is no longer supported"),
    *_sig("gguf_too_new", 10, r"this GGUF file is version \d+ but this software only supports"),
    *_sig("model_truncated", 10, r"data is not within the file bounds", r"unexpectedly reached end of file",
          r"file (?:is )?truncated", r"failed to read tensor data"),
    *_sig("unsupported_architecture", 10, r"unknown model architecture: '(?P<arch>[^']*)'"),
    *_sig("unsupported_quant_type", 10, r"has invalid ggml type (?P<type>\d+)", r"invalid ggml type"),
    *_sig("wrong_split_part", 10, r"model must be loaded with the first split"),
    *_sig("split_part_missing", 11, r"failed to load GGUF split from (?P<part>\S+)", r"invalid split (?:file|count)",
          r"expected \d+ splits?, got"),
    *_sig("model_incompatible", 15, r"wrong number of tensors", r"missing tensor '(?P<tensor>[^']+)'",
          r"check_tensor_dims: tensor '[^']+' has wrong shape"),
    *_sig("model_corrupt", 20, r"failed to read key-value pairs", r"failed to read tensor info",
          r"duplicate key", r"gguf_init_from_file\w*: .*(?:invalid|failed to read|overflow)"),
    *_sig("model_not_found", 12, r"Model path does not exist", r"failed to open (?:GGUF )?file.*No such file",
          r"gguf_init_from_file\w*: failed to open", r"No such file or directory.*\.gguf"),
    *_sig("model_unreadable", 11, r"failed to open.*Permission denied", r"Permission denied.*\.gguf"),
    *_sig("projector_failed", 14, r"mismatch between text model \(n_embd = \d+\) and mmproj",
          r"failed to load CLIP model", r"unknown projector type"),
    *_sig("mmap_failed", 18, r"failed to mmap", r"mmap failed", r"mmap\([^)]*\) failed"),
    # --- memory
    *_sig("gpu_out_of_memory", 5, r"cudaMalloc failed: out of memory", r"CUDA error: out of memory",
          r"hipMalloc failed: out of memory", r"ROCm error: out of memory", r"ErrorOutOfDeviceMemory",
          r"out of device memory", r"CUBLAS_STATUS_ALLOC_FAILED", r"cudaErrorMemoryAllocation",
          r"(?:unable|failed) to allocate (?:CUDA|ROCm|HIP|Vulkan|Metal|SYCL|MTL|OpenCL)\d* buffer",
          r"ggml_metal\w*: .*failed to allocate", r"kIOGPUCommandBufferCallbackErrorOutOfMemory"),
    *_sig("context_out_of_memory", 4, r"failed to allocate buffer for kv cache",
          r"failed to allocate compute (?:pp |tg )?buffers", r"ggml_gallocr_reserve_n\w*: failed to allocate",
          r"failed to initialize the context: .*(?:allocate|buffer|memory|reserve)"),
    # llama_context's other refusals are settings, not memory (llama-context.cpp: "quantized V cache was requested,
    # but this requires Flash Attention", "n_seq_max must be <= 256", and llama_init_from_model's checks before it):
    # the reason is its own words
    *_sig("context_rejected", 9, r"failed to initialize the context: (?P<reason>.+)$",
          r"llama_init_from_model: (?P<reason>.*(?:cannot both be zero|requires flash_attn|does not support different"
          r"|does not divide).*)$"),
    # the generic words that follow either: memory only when a memory line came first (that line ranks higher)
    *_sig("context_rejected", 58, r"Failed to create llama_context", r"llama_new_context_with_model: failed"),
    *_sig("ram_out_of_memory", 22, r"std::bad_alloc", r"insufficient memory", r"Thread creation failed",
          r"what\(\):\s+Resource temporarily unavailable", r"^\s*MemoryError\b", r"Cannot allocate memory",
          r"(?:unable|failed) to allocate CPU\w* buffer", r"(?:unable|failed) to allocate \w+_Host buffer",
          r"ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate",
          r"\bout of memory\b"),
    # --- llama.cpp RPC workers (ggml-rpc.cpp: GGML_ABORT / GGML_LOG_ERROR texts, llama-model.cpp buffer names)
    *_sig("worker_lost", 3, r"Remote RPC server crashed or returned malformed response"),
    *_sig("worker_unreachable", 3, r"Failed to connect to (?P<address>[^\s:]+:\d+)"),
    *_sig("worker_version", 3, r"RPC handshake failed for (?P<address>[^\s:]+:\d+)",
          r"RPC server version mismatch"),
    *_sig("worker_out_of_memory", 4, r"(?:unable|failed) to allocate RPC\d*\[(?P<address>[^\]]+)\] buffer"),
    # --- network
    *_sig("port_in_use", 8, r"couldn't bind HTTP server socket", r"address already in use",
          r"Errno (?:98|48|10048)\b", r"only one usage of each socket address"),
    *_sig("host_unavailable", 7, r"Cannot assign requested address", r"Errno (?:99|49|10049)\b",
          r"Name or service not known", r"nodename nor servname provided"),
    *_sig("port_in_use", 25, r"error while attempting to bind on address"),
    # Windows: WSAEACCES on bind, a port in a range Windows reserves (netsh int ipv4 show excludedportrange)
    *_sig("port_reserved", 7, r"(?:Errno|WinError|os error) 10013\b", r"forbidden by its access permissions",
          r"以一种访问权限不允许的方式做了一个访问套接字的尝试"),
    # --- options
    *_sig("bad_argument", 9, r"error: invalid argument: (?P<arg>\S+)", r"error: unknown argument: (?P<arg>\S+)",
          r"unrecognized arguments?: (?P<arg>\S+)", r"error: argument (?P<arg>[-\w/]+): ",
          r"error while handling argument \"(?P<arg>[^\"]+)\"", r"error: unknown value for (?P<arg>\S+)",
          r"the following arguments are required", r"validation errors? for (?:ModelSettings|ServerSettings)"),
    # --- GPU runtime and drivers
    *_sig("gpu_driver_problem", 6, r"CUDA driver version is insufficient", r"no CUDA-capable device",
          r"failed to initialize CUDA", r"PTX was compiled with an unsupported toolchain",
          r"no kernel image is available for execution", r"forward compatibility was attempted",
          r"unsupported display driver / cuda driver combination", r"ErrorIncompatibleDriver"),
    *_sig("gpu_error", 30, r"CUDA error: (?!out of memory)", r"ROCm error: (?!out of memory)",
          r"\bDeviceLost", r"vk::DeviceLostError", r"ggml_vulkan: .*error"),
    # --- programs and libraries
    # mmap refused: no memory left; but EPERM there is a library on a noexec mount, not memory
    *_sig("ram_out_of_memory", 2, r"failed to map segment from shared object(?!: Operation not permitted)"),
    *_sig("missing_library", 4, r"error while loading shared libraries: (?P<lib>\S+?): cannot open",
          r"(?P<lib>\S+): cannot open shared object file", r"Library not loaded: (?P<lib>\S+)",
          r"Failed to load shared library '(?P<lib>[^']+)'", r"ModuleNotFoundError: No module named '(?P<lib>[^']+)'",
          r"The code execution cannot proceed because (?P<lib>\S+) was not found"),
    *_sig("library_incompatible", 4, r"version `(?P<lib>[^']+)' not found", r"undefined symbol: (?P<lib>\S+)",
          r"symbol lookup error"),
    *_sig("illegal_instruction", 3, r"Illegal instruction", r"Windows Error 0xc000001d", r"WinError -1073741795\b"),
    # --- Windows loader and code integrity
    *_sig("dll_version", 3,
          r"procedure entry point \S+ could not be located in the dynamic link library (?P<lib>[^\s,]+?)\.?$",
          r"'(?P<lib>[^']+\.dll)'.*WinError 127\b", r"WinError 127\b", r"fatal exception: code 0xc0000139"),
    *_sig("app_control_blocked", 2,
          r"'(?P<file>[^']+\.(?:dll|pyd|exe))'.*(?:(?:os error|WinError) 4551\b|Application Control policy)",
          r"(?:os error|WinError) 4551\b", r"An Application Control policy has blocked this file", r"0x800711C7",
          r"应用程序控制策略已阻止此文件"),
    # --- internal failures; general markers last
    *_sig("assertion_failed", 40, r"GGML_ASSERT\((?P<cond>.*)\) failed", r"GGML_ABORT", r"\bassert(?:ion)? .*failed"),
    # after a memory line (the projector did not fit in memory), before the generic load failure that follows it
    *_sig("projector_failed", 55, r"failed to load multimodal model"),
    *_sig("model_load_failed", 60, r"error loading model", r"failed to load model",
          r"exiting due to model loading error", r"Failed to load model from file",
          r"llama_load_model_from_file: failed"),
    *_sig("python_error", 80, r"^\s*(?P<exc>[A-Za-z_][\w.]*(?:Error|Exception)): (?P<msg>.*)$"),
]

# CUDA's own words (cuda_signatures.py): listed last, so within a rank the lines above win
SIGNATURES += [sig for cause, rank, patterns in CUDA_PATTERNS for sig in _sig(cause, rank, *patterns)]

SIGNATURES.sort(key=lambda sig: sig.rank)
_TRACEBACK_SOURCE = re.compile(r"^\s+(?:raise\b|File \")")  # stable: within a rank, the order above


def find_hits(lines: list[str]) -> list[SignatureHit]:
    """Every signature hit in the last SEARCH_WINDOW lines, most specific first, earlier lines first on ties
    (the root cause is printed first)."""
    hits: list[tuple[int, int, SignatureHit]] = []
    window = lines[-SEARCH_WINDOW:]
    for index, line in enumerate(window):
        if _TRACEBACK_SOURCE.match(line):
            continue  # a quoted source line ("raise ValueError(...)") repeats the message below it
        for sig in SIGNATURES:
            match = sig.pattern.search(line)
            if match:
                hits.append((sig.rank, index, SignatureHit(sig.cause, sig.rank, line.rstrip(), match)))
                break  # one cause per line: SIGNATURES is sorted, so the first match is the most specific
    hits.sort(key=lambda item: (item[0], item[1]))
    return [hit for _, _, hit in hits]
