"""Tokens/s of the engine build the set-up picks for this processor, side by side with other builds of the same
llama.cpp (llama-cpp-python's library), on the same quantized models, in one run:

- chosen    the set-up's build: GGML_NATIVE=OFF with every extension the instruction-set probe proved runs here
- portable  llama.cpp's plain GGML_NATIVE=OFF build (its default x86 set: SSE4.2, AVX, AVX2, FMA, F16C, BMI2)
- native    GGML_NATIVE=ON (-march=native), what the set-up built before: trusts whatever the CPU advertises
- baseline  every x86 extension off but SSE4.2: the lowest-common build a portable binary would ship

The comparison builds are made once and kept in the engine wheel folder (keyed by their flags), so the first
run takes minutes per build and later runs only measure. A variant whose flags are the chosen build's exactly
is not built twice: the report says it is the same build. Targets: chosen >= 0.95x native and >= 1.0x
portable (within noise), and chosen well above baseline where the CPU has AVX2.

Run: .venv/bin/python benchmarks/bench_engine_build.py [--rounds 3] [--threads N] [--variants chosen,portable,...]
Run it on an otherwise idle machine: with every core busy elsewhere, llama.cpp's threads wait on each other and
the figures swing by several times.

A short run (GGUF_BENCH_SHORT=1) builds nothing: it measures the chosen build and the comparison builds already
kept, one round, one thread, a short prompt; a ratio needs a kept comparison build.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

from app.core.engine import build, build_flags, cpu_isa  # noqa: E402
from app.core.engine.build_flags import BuildChoice  # noqa: E402

BASELINE = BuildChoice(cpu_args=("-DGGML_NATIVE=OFF", "-DGGML_SSE42=ON", "-DGGML_AVX=OFF", "-DGGML_AVX2=OFF",
                                 "-DGGML_FMA=OFF", "-DGGML_F16C=OFF", "-DGGML_BMI2=OFF"),
                       uses=("SSE4.2",), left_out=(), native=False)
NATIVE = BuildChoice(cpu_args=("-DGGML_NATIVE=ON",), uses=(), left_out=(), native=True)
PORTABLE_SET = {"sse42", "avx", "avx2", "fma", "f16c", "bmi2"}  # ggml's defaults with GGML_NATIVE=OFF

MEASURE = r"""
import json, sys, time, llama_cpp
path, threads, n_prompt, n_gen = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
llm = llama_cpp.Llama(model_path=path, n_ctx=512, n_batch=256, n_threads=threads, n_threads_batch=threads,
                      seed=0, verbose=False)
prompt = llm.tokenize(("The history of the printing press in Europe begins with " * 12).encode())[:n_prompt]
llm.reset(); llama_cpp.llama_perf_context_reset(llm._ctx.ctx)
llm.create_completion(llm.detokenize(prompt).decode(errors="ignore"), max_tokens=n_gen, temperature=0.0,
                      logit_bias={llm.token_eos(): -1000.0})
perf = llama_cpp.llama_perf_context(llm._ctx.ctx)
print(json.dumps({"pp": perf.n_p_eval / (perf.t_p_eval_ms / 1000), "tg": perf.n_eval / (perf.t_eval_ms / 1000)}))
"""


def lib_dir_of_wheel(wheel: Path, into: Path) -> Path:
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if member.startswith("llama_cpp/lib/"):
                archive.extract(member, into)
    return into / "llama_cpp" / "lib"


def installed_lib_dir() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("llama_cpp")
    return Path(spec.origin).parent / "lib"


PROMPT_TOKENS, GEN_TOKENS = harness.pick((192, 48), (32, 8))


def variant_lib(name: str, choice: BuildChoice, chosen: BuildChoice, spec: build.EngineSpec, work: Path) -> Path | None:
    if name != "chosen" and choice.cmake_args() == chosen.cmake_args():
        return None
    if name == "chosen":
        return installed_lib_dir()
    folder = build.wheelhouse() / build.wheel_key(spec, choice.cmake_args(), build.python_tag(sys.executable))
    if harness.short() and build.kept_wheel(folder) is None:
        print(f"  {name}: no kept build of it, and a short run builds nothing: not measured", flush=True)
        return None
    print(f"  {name}: building (or reusing) llama-cpp-python with {' '.join(choice.cpu_args)} ...", flush=True)
    wheel, reused = build.build_wheel(spec, choice.cmake_args(), python=sys.executable, jobs=build.build_jobs())
    print(f"  {name}: {'kept wheel reused' if reused else 'built'}", flush=True)
    return lib_dir_of_wheel(wheel, work / name)


def measure(lib: Path, model: Path, threads: int) -> dict[str, float]:
    env = dict(os.environ, LLAMA_CPP_LIB_PATH=str(lib))
    out = subprocess.run([sys.executable, "-c", MEASURE, str(model), str(threads), str(PROMPT_TOKENS),
                          str(GEN_TOKENS)], env=env, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.stderr.write(out.stderr[-4000:])
        return {"error": out.returncode}
    return json.loads(out.stdout.strip().splitlines()[-1])


def models(work: Path) -> dict[str, Path]:
    from app.core.gguf.quantize import quantize
    from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama

    found = {"SmolLM2-135M Q4_1": harness.smollm2()}  # the tests' copy (tests/model_cache.py), fetched if missing
    layers, width = harness.pick((8, 1024), (2, 256))
    source = write_tiny_llama(work / "gen-f32.gguf", TinyModelSpec(n_layers=layers, n_embd=width, n_head=16,
                                                                   n_head_kv=4, n_ff=width * 11 // 4, seed=1,
                                                                   name="bench-gen"))
    found[f"generated {layers}x{width} Q4_K_M"] = quantize(source, "Q4_K_M", work / "gen-q4km.gguf")
    return found


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=harness.pick(3, 1))
    parser.add_argument("--variants", default="chosen,portable,native,baseline")
    parser.add_argument("--threads", type=int, default=harness.pick(os.cpu_count() or 1, 1),
                        help="engine threads (default: every core; on a busy machine 1 is far less noisy)")
    args = parser.parse_args()
    harness.announce_short(f"no build made, {args.rounds} round, {args.threads} thread, a {PROMPT_TOKENS}-token prompt "
                           f"and {GEN_TOKENS} generated tokens, a small generated model",
                           "The ratios need a kept comparison build; the figures come from this one small run")
    report = cpu_isa.probe()
    chosen = build_flags.choose(report)
    print(build_flags.summary_line(chosen))
    spec = next(s for s in build.pinned_engines() if s.package == "llama-cpp-python")
    portable_same = {f.name for f in report.usable()} == PORTABLE_SET
    candidates = {"chosen": chosen, "portable": build_flags.portable(), "native": NATIVE, "baseline": BASELINE}
    threads = args.threads
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as tmp:
        work = Path(tmp)
        libs = {}
        for name in args.variants.split(","):
            lib = variant_lib(name, candidates[name], chosen, spec, work)
            if lib is None:
                if candidates[name].cmake_args() == chosen.cmake_args():
                    print(f"  {name}: same flags as the chosen build: not built twice (ratio 1.00 by construction)")
                continue
            libs[name] = lib
        if portable_same and "portable" in libs:
            print("  note: on this CPU the probe's set equals llama.cpp's GGML_NATIVE=OFF defaults")
        test_models = models(work)
        results: dict[tuple[str, str], dict[str, list[float]]] = {}
        for _ in range(args.rounds):  # interleaved, so drift in machine load hits every variant alike
            for model_name, model in test_models.items():
                for name, lib in libs.items():
                    got = measure(lib, model, threads)
                    slot = results.setdefault((name, model_name), {"pp": [], "tg": []})
                    if "error" in got:
                        slot.setdefault("errors", []).append(got["error"])
                        continue
                    slot["pp"].append(got["pp"])
                    slot["tg"].append(got["tg"])
    print(f"\nmedian of {args.rounds} rounds, {threads} threads (pp: prompt tokens/s, tg: generated tokens/s)")
    broken = []
    for model_name in test_models:
        base = results.get(("chosen", model_name))
        print(f"\n{model_name}")
        for name in libs:
            slot = results[(name, model_name)]
            if slot.get("errors"):
                print(f"  {name:9s} crashed or failed: exit {slot['errors']}")
                if name == "chosen":
                    broken.append(model_name)
                continue
            pp, tg = statistics.median(slot["pp"]), statistics.median(slot["tg"])
            ratio = ""
            if base and base["pp"] and name != "chosen":
                ratio = (f"   chosen/{name}: pp {statistics.median(base['pp']) / pp:.2f}x, "
                         f"tg {statistics.median(base['tg']) / tg:.2f}x")
            print(f"  {name:9s} pp {pp:8.1f}  tg {tg:7.1f}{ratio}")
    if broken:
        raise harness.BenchFailure(f"the installed (chosen) engine failed on {', '.join(broken)}")
    return 0


if __name__ == "__main__":
    sys.exit(harness.guarded(main))
