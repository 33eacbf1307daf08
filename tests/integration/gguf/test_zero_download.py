"""A download that stopped early or lost a segment: llama.cpp's loader accepts the file, the doctor does not.

The issue's exact cases on the real SmolLM2-135M-Instruct Q4_1 (98 MB): the last 30 % zeroed, as a browser or aria2
leaves a pre-allocated file, and 1 MiB holes inside the tensor data. Each goes to llama.cpp's real loader (which
loads it) and to ``validate()``, fast (probes) and full (the SHA-256 pass), which must fail it with the sentence.

Then the false positives: the zero-data row must pass on every real and generated model the tests use:
SmolLM2 (and an F16 copy of it), the generated architectures at F16 and quantized by llama.cpp to Q4_0, Q4_K_M and
Q8_0, the other shapes the tests generate (a 100 MB MoE among them), the demo's tiny llamas, the KV-heavy llama
and a generated vision projector. The count is printed and must be 0.
"""

from __future__ import annotations

import subprocess

import pytest

from app.core.gguf.validate import validate
from app.core.gguf.zero_check import CHECK_ID
from app.core.problem import Status
from app.core.synthetic import SyntheticSpec, write_model
from app.core.synthetic.projector import write_projector
from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama
from app.core.text import human_bytes
from tests.conftest import GENERATED_ARCHS, QUANTS
from tests.data.plan.record import DEEPSEEK2_8H, GEMMA3, QWEN3MOE
from tests.integration.gguf.loader_agreement.loader_client import RealLoader
from tests.integration.probe.test_probe_cpu import KV_SPEC

pytestmark = pytest.mark.slow

MIB = 1 << 20
# the other shapes the tests generate: the workers' llama, the 100 MB MoE plan, the plan benchmark's recordings
SIZED = [("llama", SyntheticSpec(n_layers=8, n_embd=512, n_head=8, n_head_kv=4, n_ff=1536, ctx_train=4096)),
         ("qwen3moe", SyntheticSpec(n_layers=8, n_embd=512, n_head=8, n_head_kv=2, n_expert=8, n_expert_used=2,
                                    n_ff_exp=512)),
         ("gemma3", GEMMA3), ("qwen3moe", QWEN3MOE), ("deepseek2", DEEPSEEK2_8H)]


def _zeroed(source, target, start: int, end: int):
    data = bytearray(source.read_bytes())
    data[start:end] = bytes(end - start)
    target.write_bytes(bytes(data))
    return target


def _cases(smollm2, folder) -> list[tuple[str, object, str]]:
    size = smollm2.stat().st_size
    cut = int(size * 0.7)
    cases = [("last 30 % zeroed", _zeroed(smollm2, folder / "tail.gguf", cut, size),
              f"The last {human_bytes(size - cut)} of this file are zeros: the download stopped before the end.")]
    for start in (20 * MIB, 47 * MIB + 12_345, 80 * MIB + 7):
        cases.append((f"1 MiB hole at byte {start:,}", _zeroed(smollm2, folder / f"hole-{start}.gguf", start,
                                                              start + MIB),
                      "1.0 MiB in the middle of this file are zeros"))
    return cases


def test_the_doctor_fails_what_llama_cpp_loads(smollm2_model, tmp_path):
    loader = RealLoader()
    try:
        for label, path, sentence in _cases(smollm2_model, tmp_path):
            assert loader.load(path)["loads"], f"{label}: llama.cpp refused it, so the doctor is not needed here"
            for full in (False, True):
                row = validate(path, compute_sha256=full).check(CHECK_ID)
                print(f"{label} ({'full pass' if full else 'fast check'}): {row.message.render('en')}")
                assert row.status is Status.ERROR and row.message.render("en").startswith(sentence), label
    finally:
        loader.close()


def _f16_copy(quantize_bin: str, src, dst):
    """``src`` dequantized to F16 by llama.cpp's own llama-quantize (the demo's derived copy is made this way)."""
    done = subprocess.run([quantize_bin, "--allow-requantize", str(src), str(dst), "F16", "2"], capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return dst


def _every_model(smollm2, quantized_models, quantize_bin, folder) -> list:
    models = [smollm2, _f16_copy(quantize_bin, smollm2, folder / "smollm2.F16.gguf"),
              write_tiny_llama(folder / "tiny.gguf"),
              write_tiny_llama(folder / "tiny-gqa-f16.gguf", TinyModelSpec(n_layers=3, n_head=4, n_head_kv=2,
                                                                           f16=True)),
              write_tiny_llama(folder / "kv-heavy.gguf", KV_SPEC),
              write_projector(folder / "mmproj.gguf", 64)]
    models += [write_model(arch, folder / f"sized-{i}-{arch}.gguf", spec) for i, (arch, spec) in enumerate(SIZED)]
    for arch in GENERATED_ARCHS:
        models += [quantized_models(arch, quant) for quant in ("F16", *QUANTS)]
    return models


def test_no_false_positive_on_any_model_the_tests_use(smollm2_model, quantized_models, llama_quantize_bin, tmp_path):
    models = _every_model(smollm2_model, quantized_models, llama_quantize_bin, tmp_path)
    flagged = []
    for path in models:
        for full in (False, True):
            row = validate(path, compute_sha256=full).check(CHECK_ID)
            if row is None or row.status is not Status.OK:
                flagged.append(f"{path.name} ({'full' if full else 'fast'}): "
                               f"{row.message.render('en') if row else 'no row'}; {row.evidence if row else ''}")
    print(f"\nzero-data row on {len(models)} models, fast and full: {len(flagged)} false positives")
    for line in flagged:
        print("  ", line)
    assert len(models) >= 43 and not flagged
