"""Supervisor timings on real servers (both backends, tiny generated model):

- crash latency: child SIGKILLed -> "crash" event delivered (target <= 0.5 s)
- restart overhead: (child death -> ready again) - (cold start -> ready) (target <= 1.0 s; includes the 0.5 s back-off)

Run: .venv/bin/python benchmarks/bench_supervisor.py [--cycles N] [--server-bin PATH]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("GGUF_LAUNCHER_HOME", tempfile.mkdtemp(prefix="bench-supervisor-"))

import harness  # noqa: I001
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.server.supervisor import State, Supervisor
from app.core.synthetic.tiny_llama import write_tiny_llama


def expect(happened: bool, supervisor: Supervisor, what: str) -> None:
    if not happened:
        sys.stderr.write("\n".join(str(line) for line in supervisor.tail(20)) + "\n")
        raise harness.BenchFailure(f"no {what} ({supervisor.config.backend}): the server is {supervisor.state.name}")


def measure(config: LaunchConfig, cycles: int) -> dict[str, list[float]]:
    supervisor = Supervisor(config)
    crash_seen = threading.Event()
    crash_times: list[float] = []
    supervisor.subscribe(lambda e: (crash_times.append(time.time()), crash_seen.set()) if e.kind == "crash" else None)
    cold, latency, back_to_ready = [], [], []
    try:
        for _ in range(cycles):  # cold starts
            t0 = time.monotonic()
            supervisor.start()
            expect(supervisor.wait_for({State.READY, State.FAILED}, 120) is State.READY, supervisor, "a cold start")
            cold.append(time.monotonic() - t0)
            supervisor.stop()
        supervisor.start()
        expect(supervisor.wait_for({State.READY, State.FAILED}, 120) is State.READY, supervisor, "a cold start")
        for _ in range(cycles):
            supervisor.crash_policy.reset()  # measure restarts, not the crash-loop guard
            crash_seen.clear()
            pid = supervisor.pid
            killed_wall, killed = time.time(), time.monotonic()
            os.kill(pid, signal.SIGKILL)
            expect(crash_seen.wait(10), supervisor, "the crash event within 10 s of the kill")
            latency.append(crash_times[-1] - killed_wall)
            expect(supervisor.wait_for({State.RESTARTING, State.FAILED}, 10) is State.RESTARTING, supervisor,
                   "a restart after the kill")
            expect(supervisor.wait_for({State.READY, State.FAILED}, 120) is State.READY, supervisor,
                   "ready again after the restart")
            back_to_ready.append(time.monotonic() - killed)
    finally:
        supervisor.close()
    return {"cold": cold, "latency": latency, "back_to_ready": back_to_ready}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cycles", type=int, default=harness.pick(3, 1))
    parser.add_argument("--server-bin")
    args = parser.parse_args()
    harness.announce_short(f"{args.cycles} cold start and {args.cycles} kill per engine",
                           "The figures come from this one cycle")
    model = write_tiny_llama(Path(os.environ["GGUF_LAUNCHER_HOME"]) / "bench-tiny.gguf")
    server_bin = harness.llama_server_bin(args.server_bin)
    backends = [("embedded", None), ("llama-server", server_bin)]
    print(f"{'backend':<13} {'cold load s':>11} {'crash->event s':>15} {'crash->ready s':>15} "
          f"{'restart overhead s':>19}")
    for name, binary in backends:
        config = LaunchConfig(model=str(model), backend=name, server_bin=binary, ctx=512, threads=1,
                              port=find_free_port())
        result = measure(config, args.cycles)
        cold, latency, ready = (statistics.median(result[k]) for k in ("cold", "latency", "back_to_ready"))
        print(f"{name:<13} {cold:>11.3f} {latency:>15.3f} {ready:>15.3f} {ready - cold:>19.3f}"
              f"   (targets: event <= 0.5, overhead <= 1.0; medians of {args.cycles}; back-off 0.5 s included)")
    return 0


if __name__ == "__main__":
    sys.exit(harness.guarded(main))
