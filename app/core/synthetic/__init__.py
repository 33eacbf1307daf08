"""Generated random-weight GGUF models of several architectures, loadable by llama.cpp.

``write_model(arch, path, spec=None) -> Path``; ``ARCHITECTURES`` names what can be written. Each model is a few
MB, seeded (the same spec writes the same bytes), with a tokenizer and chat template of its family, and every
matrix row a multiple of 256 so that K-quants (Q4_K_M) really produce K-quant tensors when quantized.
Used by the tests and benchmarks; the demo model of the app stays ``app.core.synthetic.tiny_llama``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from app.core.synthetic.archs import (
    write_deepseek2,
    write_gemma3,
    write_granitehybrid,
    write_llama,
    write_mamba2,
    write_phi3,
    write_qwen2,
    write_qwen3moe,
)
from app.core.synthetic.writer import K_QUANT_BLOCK, SyntheticSpec

Writer = Callable[[str | os.PathLike[str], SyntheticSpec | None], Path]

ARCHITECTURES: dict[str, Writer] = {
    "llama": write_llama,
    "qwen2": write_qwen2,
    "qwen3moe": write_qwen3moe,
    "gemma3": write_gemma3,
    "phi3": write_phi3,
    "deepseek2": write_deepseek2,
    "mamba2": write_mamba2,
    "granitehybrid": write_granitehybrid,
}


def write_model(arch: str, path: str | os.PathLike[str], spec: SyntheticSpec | None = None) -> Path:
    """Write a random-weight model of ``arch`` (a key of ARCHITECTURES) to ``path`` and return the path."""
    try:
        writer = ARCHITECTURES[arch]
    except KeyError:
        raise ValueError(f"no generator for architecture {arch!r}; choose one of {sorted(ARCHITECTURES)}") from None
    return writer(path, spec)


__all__ = [
    "ARCHITECTURES",
    "K_QUANT_BLOCK",
    "SyntheticSpec",
    "write_deepseek2",
    "write_gemma3",
    "write_granitehybrid",
    "write_llama",
    "write_mamba2",
    "write_model",
    "write_phi3",
    "write_qwen2",
    "write_qwen3moe",
]
