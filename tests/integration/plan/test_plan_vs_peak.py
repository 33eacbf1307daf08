"""The plan against the real servers of both engines: after a prompt filling 80 % of the context, the plan is within
10 % of the peak RSS and never more than 5 % below it, on the two misses of issue 22:

- SmolLM2-135M Q4_1 at 2048 tokens: the built-in engine reserves its compute buffer for the logits of a whole
  micro-batch (96 MiB at a 49,152-token vocabulary) but computes one row, so those pages are never resident; the
  plan counted them and was 18 % high (340 vs 287 MiB).
- The probe tests' KV-heavy model (32 layers, 16 KiB of KV cache a token) at 8192: without flash attention the
  CPU converts the attention scores to f16 in a work buffer beside the compute buffer; the plan left it out and
  was 6 % low at 11008 tokens.

And on llama-server with the context full, for the generated Qwen3-MoE at 8192: long text prompts leave up to ~1 KiB a
token in the heap and the HTTP threads' malloc arenas (the plan counted 56 bytes and was 9-10 % low at full).
"""

from __future__ import annotations

import pytest

from app.core.gguf.quantize import quantize
from app.core.gguf.reader import read_model_info
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.plan.memory import make_plan
from app.core.synthetic import write_model
from app.core.synthetic.archs import QWEN3MOE_SPEC
from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama
from tests.integration.plan.peak import peak_after_prompt, peaks_after_text_prompts

MiB = 1024 * 1024
FILL = 0.8
KV_HEAVY = TinyModelSpec(n_layers=32, n_embd=128, n_head=2, n_head_kv=2, n_ff=128, ctx_train=32768, f16=True,
                         name="kv-heavy")


@pytest.fixture(scope="module")
def kv_heavy(tmp_path_factory):
    return write_tiny_llama(tmp_path_factory.mktemp("kv") / "kv-heavy.gguf", KV_HEAVY)


def _plan_and_peak(model, ctx: int, backend: str, server_bin: str) -> tuple[float, float, int]:
    config = LaunchConfig(model=str(model), backend=backend, server_bin=server_bin, ctx=ctx, parallel=1,
                          batch=512, ubatch=512, threads=2, port=find_free_port())
    plan = make_plan(read_model_info(model), config, None, ram_budget=64 * 1024 * MiB).device("RAM").total_bytes
    peak = peak_after_prompt(config, FILL)
    print(f"{model.name} {backend} -c {ctx}: plan {plan / MiB:.1f} MiB, peak {peak.rss / MiB:.1f} MiB after "
          f"{peak.prompt_tokens} prompt tokens, plan/peak {plan / peak.rss:.3f}")
    return plan / MiB, peak.rss / MiB, peak.prompt_tokens


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["llama-server", "embedded"])
@pytest.mark.parametrize("which, ctx", [("smollm2", 2048), ("kv-heavy", 8192)])
def test_plan_holds_against_the_peak_with_the_context_filled(which, ctx, backend, request, llama_server_bin):
    model = request.getfixturevalue("smollm2_model" if which == "smollm2" else "kv_heavy")
    plan, peak, prompt_tokens = _plan_and_peak(model, ctx, backend, llama_server_bin)
    assert prompt_tokens >= 0.75 * ctx, prompt_tokens  # the context really was filled
    assert 0.95 <= plan / peak <= 1.10, (plan, peak)


@pytest.mark.slow
def test_llama_server_plan_holds_with_the_context_full(tmp_path, llama_server_bin):
    src = write_model("qwen3moe", tmp_path / "qwen3moe.F16.gguf", QWEN3MOE_SPEC.with_changes(ctx_train=32768))
    model = quantize(src, "Q4_K_M", tmp_path / "qwen3moe.Q4_K_M.gguf", threads=2)
    config = LaunchConfig(model=str(model), backend="llama-server", server_bin=llama_server_bin, ctx=8192,
                          parallel=1, batch=512, ubatch=512, threads=2, port=find_free_port())
    plan = make_plan(read_model_info(model), config, None, ram_budget=64 * 1024 * MiB).device("RAM").total_bytes
    at_80, full = peaks_after_text_prompts(config, (FILL, 1 - 48 / 8192))
    print(f"qwen3moe llama-server -c 8192: plan {plan / MiB:.1f} MiB, peak {at_80.rss / MiB:.1f} MiB after "
          f"{at_80.prompt_tokens} tokens (plan/peak {plan / at_80.rss:.3f}), {full.rss / MiB:.1f} MiB after "
          f"{full.prompt_tokens} (plan/peak {plan / full.rss:.3f})")
    assert full.prompt_tokens >= 0.98 * 8192 - 48, full.prompt_tokens  # the context really was full
    assert 0.95 <= plan / full.rss <= 1.10, (plan / MiB, full.rss / MiB)
