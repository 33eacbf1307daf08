"""Child process: load GGUF files with llama.cpp's real loader (llama-cpp-python's low-level API), one per line.

Reads one path per line on stdin and answers one JSON line per path on stdout:
``{"path": ..., "loads": true|false, "error": "<last loader error line>"}``. A GGML_ASSERT aborts
this process; the parent sees the pipe close, counts the file as not loading, and starts a new child.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys


def main() -> int:
    # answers go to a private copy of stdout; whatever the C library prints to fd 1 goes to stderr instead
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    import llama_cpp

    errors: list[str] = []

    @llama_cpp.llama_log_callback
    def on_log(level, text, _user_data):  # keep only error lines, print nothing
        if level == 4 and text:  # GGML_LOG_LEVEL_ERROR (5 is CONT: progress dots)
            errors.append(text.decode("utf-8", errors="replace").strip())

    llama_cpp.llama_log_set(on_log, ctypes.c_void_p(0))
    llama_cpp.llama_backend_init()
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    for line in sys.stdin:
        path = line.rstrip("\n")
        if not path:
            continue
        errors.clear()
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = False
        params.n_gpu_layers = 0
        model = llama_cpp.llama_model_load_from_file(path.encode(), params)
        loads = bool(model)
        if loads:
            llama_cpp.llama_model_free(model)
        error = " | ".join(e for e in errors if e and "failed to load model" not in e)
        out.write(json.dumps({"path": path, "loads": loads, "error": error[-300:]}) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
