"""The doctor's verdict (loads / does not load) agrees with llama.cpp's real loader on damaged files.

Valid generated models (the demo's tiny llama in two shapes, app.core.synthetic's llama, qwen2,
qwen3moe, gemma3, phi3, deepseek2, mamba2 and granitehybrid, and two of them quantized by llama.cpp to Q4_K_M
and Q4_0) are damaged
hundreds of times at the byte level with a seeded RNG (tests/integration/gguf/loader_agreement/mutations.py:
key names, value and item types, array lengths, hyper-parameter values, tensor names, deleted
tensors, dimensions, tensor types, truncation, token texts and types, string values). Each damaged
file goes to ``validate()`` and to llama.cpp's loader (llama-cpp-python's llama_model_load_from_file,
vocab_only=False) in a long-lived child process that is restarted after a GGML_ASSERT abort. The two
must agree on at least 99 % of the files; every disagreement is printed.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from app.core.gguf.quantize import quantize
from app.core.gguf.validate import validate
from app.core.synthetic import ARCHITECTURES, write_model
from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama
from tests.integration.gguf.loader_agreement.loader_client import RealLoader
from tests.integration.gguf.loader_agreement.mutations import mutate

pytestmark = pytest.mark.slow

N_CASES = 400
SEED = 20251201
MIN_AGREEMENT = 0.99
LOADER_CHECKS = {"loader_metadata", "tokenizer", "tensor_names", "layers", "tensor_shapes"}
# the generated architectures whose layout the doctor knows
SYNTHETIC = ("llama", "qwen2", "qwen3moe", "gemma3", "phi3", "deepseek2", "mamba2", "granitehybrid")


def _base_models(folder: Path, loader: RealLoader) -> list[Path]:
    bases = [
        write_tiny_llama(folder / "demo-llama.gguf"),
        write_tiny_llama(folder / "demo-llama-gqa-f16.gguf",
                         TinyModelSpec(n_layers=3, n_head=4, n_head_kv=2, f16=True)),
    ]
    bases += [write_model(arch, folder / f"{arch}.F16.gguf") for arch in SYNTHETIC if arch in ARCHITECTURES]
    bases += [quantize(folder / "llama.F16.gguf", "Q4_K_M", folder / "llama.Q4_K_M.gguf", threads=2),
              quantize(folder / "qwen3moe.F16.gguf", "Q4_0", folder / "qwen3moe.Q4_0.gguf", threads=2)]
    for base in bases:  # every starting point loads, and the doctor says so
        real, report = loader.load(base), validate(base)
        assert real["loads"], (base.name, real["error"])
        assert not report.has_errors, (base.name, [c.to_dict("en") for c in report.checks if c.is_error])
    return bases


def test_doctor_agrees_with_the_real_loader_on_damaged_files(tmp_path):
    loader = RealLoader()
    started = time.perf_counter()
    try:
        bases = _base_models(tmp_path, loader)
        pristine = [base.read_bytes() for base in bases]
        rng = random.Random(SEED)
        target = tmp_path / "damaged.gguf"
        disagreements, loads, without_new = [], 0, 0
        for case in range(N_CASES):
            index = case % len(bases)
            label, data = mutate(rng, pristine[index])
            target.write_bytes(data)
            report = validate(target)
            doctor = not report.has_errors
            real = loader.load(target)
            loads += real["loads"]
            without_new += (not any(c.is_error for c in report.checks if c.id not in LOADER_CHECKS)) == real["loads"]
            if doctor != real["loads"]:
                errors = [f"{c.id}: {c.message.render('en')}" for c in report.checks if c.is_error]
                disagreements.append(f"case {case} {bases[index].name}: {label}; llama.cpp "
                                     f"{'loads' if real['loads'] else 'fails: ' + real['error'][:200]}; doctor "
                                     f"{'errors: ' + '; '.join(errors[:2]) if errors else 'finds no error'}")
    finally:
        loader.close()
    elapsed = time.perf_counter() - started
    agreement = 1 - len(disagreements) / N_CASES
    print(f"\n{N_CASES} damaged files from {len(bases)} models in {elapsed:.1f} s: llama.cpp loads {loads}, refuses "
          f"{N_CASES - loads} ({loader.crashes} by aborting); doctor agrees on {N_CASES - len(disagreements)} "
          f"({agreement:.2%}); without the loader checks it would agree on {without_new / N_CASES:.2%}")
    for line in disagreements:
        print("  disagreement:", line)
    assert agreement >= MIN_AGREEMENT, "\n".join(disagreements)
    assert 0 < loads < N_CASES  # both verdicts occur, so agreement is not trivial
