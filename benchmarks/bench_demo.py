"""What the demo's answering copy costs: SmolLM2-135M-Instruct Q4_1 (the download) vs its F16 copy made here.

Makes the copy with the app's quantizer (as the demo does, timed), then, with the built-in engine (llama-cpp-python,
one thread by default, one child per run, runs alternating between the files), asks both "What is the capital of
France?" at temperature 0 and generates 64 tokens after a 200-token prompt: size, prompt and generation tokens/s, and
the answers, side by side with the ratios. About 35 s on 2 cores.

    .venv/bin/python benchmarks/bench_demo.py [--smollm2 PATH] [--runs 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

GENERATE = harness.pick(64, 8)
PROMPT_WORDS = harness.pick(200, 45)

_CHILD = """
import json, sys, time
import llama_cpp
from app.core.demo.answer import MAX_TOKENS, QUESTION
path, generate, words, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
llm = llama_cpp.Llama(model_path=path, n_ctx=1024, n_threads=threads, n_threads_batch=threads, seed=0, verbose=False)
answer = llm.create_chat_completion(messages=[{"role": "user", "content": QUESTION}], temperature=0.0,
                                    max_tokens=MAX_TOKENS, seed=0)["choices"][0]["message"]["content"]
llm.reset()
prompt = " ".join(["The quick brown fox jumps over the lazy dog."] * (words // 9))
n_prompt = len(llm.tokenize(prompt.encode()))
started = time.perf_counter()
first = None
count = 0
for _ in llm.create_completion(prompt, max_tokens=generate, temperature=0.0, stream=True,
                               logit_bias={llm.token_eos(): -1000.0}):
    count += 1
    if first is None:
        first = time.perf_counter()
end = time.perf_counter()
print(json.dumps({"answer": answer, "prompt_tps": n_prompt / (first - started),
                  "gen_tps": (count - 1) / (end - first)}))
"""


def find_smollm2(explicit: str | None) -> Path:
    """``explicit``, else the tests' copy in the pytest cache (fetched there by tests/model_cache.py when missing)."""
    if explicit and not Path(explicit).is_file():
        raise harness.BenchFailure(f"--smollm2 {explicit}: no such file")
    return Path(explicit) if explicit else harness.smollm2()


def run_once(path: Path, threads: int) -> dict:
    done = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(GENERATE), str(PROMPT_WORDS), str(threads)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-4000:])
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise harness.BenchFailure(f"the engine child for {path.name} exited {done.returncode}: {last[:200]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smollm2", metavar="PATH", help="SmolLM2-135M-Instruct.Q4_1.gguf (default: the tests' copy)")
    parser.add_argument("--runs", type=int, default=harness.pick(3, 1))
    parser.add_argument("--threads", type=int, default=1, help="engine threads (one: a busy machine hurts less)")
    args = parser.parse_args()
    harness.announce_short(f"{args.runs} run per file, a {PROMPT_WORDS}-word prompt, {GENERATE} generated tokens")
    from app.core.gguf.quantize import quantize

    q4_1 = find_smollm2(args.smollm2)
    with tempfile.TemporaryDirectory(prefix="bench-demo-") as work:
        started = time.perf_counter()
        f16 = quantize(q4_1, "F16", Path(work) / "SmolLM2-135M-Instruct.F16.gguf", threads=2, allow_requantize=True)
        make_s = time.perf_counter() - started
        files = {"Q4_1": q4_1, "F16": f16}
        runs: dict[str, list[dict]] = {name: [] for name in files}
        for _ in range(args.runs):
            for name, path in files.items():  # alternating: background load hits both alike
                runs[name].append(run_once(path, args.threads))
        report(files, runs, make_s, args.threads)
    return 0


def report(files: dict[str, Path], runs: dict[str, list[dict]], make_s: float, threads: int) -> None:
    sizes = {name: path.stat().st_size for name, path in files.items()}
    median = {name: {key: statistics.median(r[key] for r in rows) for key in ("prompt_tps", "gen_tps")}
              for name, rows in runs.items()}
    print(f"F16 copy made by the app's quantizer in {make_s:.1f} s (2 threads)")
    print(f"{'':8}{'size':>10}{'prompt tok/s':>15}{'gen tok/s':>12}  answer to 'What is the capital of France?'")
    for name in files:
        answer = " ".join(runs[name][0]["answer"].split())
        print(f"{name:8}{sizes[name] / 1e6:>8.1f}MB{median[name]['prompt_tps']:>15.1f}"
              f"{median[name]['gen_tps']:>12.1f}  {answer[:70]!r}")
    print(f"F16 / Q4_1: size {sizes['F16'] / sizes['Q4_1']:.2f}x, prompt "
          f"{median['F16']['prompt_tps'] / median['Q4_1']['prompt_tps']:.2f}x, generation "
          f"{median['F16']['gen_tps'] / median['Q4_1']['gen_tps']:.2f}x (medians of {len(runs['F16'])} runs each, "
          f"{threads} engine thread{'s' if threads > 1 else ''})")


if __name__ == "__main__":
    sys.exit(harness.guarded(main))
