"""CUDA's last words in a llama.cpp log, each naming a cause (ranked like signatures.SIGNATURES: lower wins).

Recorded texts, each from a public issue thread (tests/data/nvidia/SOURCES.md quotes them):
- "CUDA driver version is insufficient for CUDA runtime version" (abetlen/llama-cpp-python#1436, ollama/ollama#7666),
  "the provided PTX was compiled with an unsupported toolchain" (ggml-org/llama.cpp#5845),
  "system has unsupported display driver / cuda driver combination" (ggml-org/llama.cpp#17542): the driver is
  older than the CUDA runtime the build carries;
- "no CUDA-capable device is detected" (abetlen/llama-cpp-python#1890);
- "ggml_cuda_init: failed to initialize CUDA: initialization error" (meta-llama/llama3#215): any other reason;
- "no kernel image is available for execution on the device" (boneylizard/llama-cpp-python-cu128-gemma3#6): the
  build carries no code for this card's compute capability;
- "error while loading shared libraries: libcudart.so.12: cannot open shared object file" (ollama/ollama#602),
  "The code execution cannot proceed because cudart64_12.dll was not found." (janhq/jan#6960): the CUDA runtime
  libraries are not where the program looks.
"""

from __future__ import annotations

_RUNTIME_LIB = r"(?P<lib>(?:lib(?:cudart|cublas|cublasLt)\.so[.\d]*|(?:cudart|cublas|cublasLt)64_\d+\.dll))"

# (cause, rank, patterns): signatures.SIGNATURES compiles them with its own (this module imports nothing of it)
CUDA_PATTERNS: tuple[tuple[str, int, tuple[str, ...]], ...] = (
    # before missing_library (rank 4): the same lines, with the CUDA runtime's own fix
    ("cuda_runtime_missing", 3, (r"error while loading shared libraries: " + _RUNTIME_LIB + r": cannot open",
                                 _RUNTIME_LIB + r": cannot open shared object file",
                                 r"cannot proceed because " + _RUNTIME_LIB + r" was not found",
                                 r"Failed to load shared library '[^']*': " + _RUNTIME_LIB)),
    # before gpu_driver_problem (rank 6), whose patterns these refine; a CUDA out-of-memory line is rank 5 as well
    # and listed earlier, so it still wins on its own line
    ("cuda_driver_too_old", 5, (r"CUDA driver version is insufficient for CUDA runtime version",
                                r"PTX was compiled with an unsupported toolchain",
                                r"unsupported display driver / cuda driver combination",
                                r"forward compatibility was attempted on non supported HW")),
    ("cuda_card_unsupported", 5, (r"no kernel image is available for execution on the device",)),
    ("cuda_no_device", 5, (r"no CUDA-capable device is detected",)),
    ("cuda_init_failed", 5, (r"ggml_cuda_init: failed to initialize CUDA: ?(?P<reason>.+)$",)),
)

CUDA_CAUSES = ("cuda_runtime_missing", "cuda_driver_too_old", "cuda_card_unsupported", "cuda_no_device",
               "cuda_init_failed")
