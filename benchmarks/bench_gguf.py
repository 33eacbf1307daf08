"""GGUF benchmarks, ratios side by side in one run:

1. metadata inspection of a GGUF with a 152,000-token vocabulary and 151,000 merges:
   app reader vs gguf.GGUFReader (target: app >= 100x faster);
2. SHA-256 of a 1 GiB file: app vs coreutils `sha256sum` (target: app >= 0.9x its throughput).

Run: .venv/bin/python benchmarks/bench_gguf.py [--keep] [--size-mib N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness
import numpy as np

N_TOKENS, N_MERGES = harness.pick((152_000, 151_000), (15_200, 15_100))


def write_big_vocab_model(path: Path) -> Path:
    import gguf

    writer = gguf.GGUFWriter(str(path), "qwen2")
    writer.add_name("bench-vocab")
    writer.add_block_count(1)
    writer.add_context_length(32768)
    writer.add_embedding_length(8)
    writer.add_head_count(2)
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list([f"tok_{i:06d}" for i in range(N_TOKENS)])
    writer.add_token_types([1] * N_TOKENS)
    writer.add_token_merges([f"tok_{i:06d} tok_{i + 1:06d}" for i in range(N_MERGES)])
    writer.add_chat_template("{% for m in messages %}{{ m['content'] }}{% endfor %}")
    writer.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    writer.add_tensor("blk.0.attn_q.weight", np.zeros((8, 8), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def bench_metadata(folder: Path) -> None:
    import gguf

    from app.core.gguf.reader import read_model_info

    path = write_big_vocab_model(folder / "vocab152k.gguf")
    read_model_info(path)  # warm the page cache for both readers
    app_times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        info = read_model_info(path)
        app_times.append(time.perf_counter() - start)
    assert info.vocab_size == N_TOKENS and info.array_lengths["tokenizer.ggml.merges"] == N_MERGES
    start = time.perf_counter()
    reader = gguf.GGUFReader(path)
    oracle = time.perf_counter() - start
    assert len(reader.fields["tokenizer.ggml.tokens"].data) == N_TOKENS
    app = statistics.median(app_times)
    print(f"[metadata] {path.stat().st_size / 2**20:.1f} MiB file, {N_TOKENS} tokens, {N_MERGES} merges")
    print(f"[metadata] app reader      {app * 1000:9.1f} ms (median of {RUNS})")
    print(f"[metadata] gguf.GGUFReader {oracle * 1000:9.1f} ms")
    print(f"[metadata] ratio           {oracle / app:9.1f}x faster (target >= 100x)")


RUNS = harness.pick(5, 1)


def _time_it(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bench_sha256(folder: Path, size_mib: int) -> None:
    from app.core.gguf.sha256 import hash_stream

    path = folder / "blob.bin"
    block = np.random.default_rng(0).integers(0, 256, 1 << 20, dtype=np.uint8).tobytes()
    with open(path, "wb") as f:
        for _ in range(size_mib):
            f.write(block)
    sha256sum = shutil.which("sha256sum")
    if sha256sum is None:
        raise harness.BenchFailure("coreutils sha256sum not found: the SHA-256 comparison needs it")
    expected = subprocess.run([sha256sum, str(path)], capture_output=True, text=True, check=True).stdout.split()[0]
    tool_times, app_times = [], []
    for _ in range(harness.pick(3, 1)):  # interleaved, file in the page cache for both
        tool_times.append(_time_it(lambda: subprocess.run([sha256sum, str(path)], capture_output=True, check=True)))
        app_times.append(_time_it(lambda: hash_stream(path)))
    assert hash_stream(path) == expected
    size = size_mib * 2**20
    tool, app = min(tool_times), min(app_times)
    print(f"[sha256] {size_mib} MiB file (page cache warm), best of {len(app_times)}")
    print(f"[sha256] sha256sum   {size / tool / 2**20:9.1f} MiB/s")
    print(f"[sha256] app         {size / app / 2**20:9.1f} MiB/s")
    print(f"[sha256] ratio       {tool / app:9.2f}x of sha256sum's throughput (target >= 0.9x)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mib", type=int, default=harness.pick(1024, 32),
                        help="size of the hashed file (default 1024)")
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    args = parser.parse_args()
    harness.announce_short(f"a {N_TOKENS:,}-token vocabulary, a {args.size_mib} MiB file, one timing each")
    folder = Path(tempfile.mkdtemp(prefix="bench-gguf-"))
    try:
        bench_metadata(folder)
        bench_sha256(folder, args.size_mib)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(harness.guarded(main))
