"""The expert tensors the plan counts are the ones llama.cpp itself moves: the real llama-server, asked for
``--n-cpu-moe 2`` with verbose logging, names every tensor it overrides to the CPU; on a Qwen3-MoE file quantized
to Q4_K_M by llama.cpp those are exactly the plan's expert tensors of blocks 0 and 1."""

from __future__ import annotations

import re
import subprocess
import time

from app.core.gguf.reader import read_model_info
from app.core.launch.ports import find_free_port
from app.core.plan.experts import expert_split, is_expert_tensor

OVERRIDDEN = re.compile(r"tensor (?P<name>\S+) \(\d+ MiB \w+\) buffer type overridden to (?P<buft>\S+)")
LOADED = ("server is listening", "model loaded")
LOAD_S = 90


def _load_log(server_bin: str, model, *args: str) -> list[str]:
    """llama-server's log up to the end of the load; the server is stopped then (never left running)."""
    command = [server_bin, "-m", str(model), "-c", "256", "--port", str(find_free_port()), "-v", *args]
    lines: list[str] = []
    deadline = time.monotonic() + LOAD_S
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8",
                          errors="replace") as process:  # on leaving: its pipe closed, the process waited for
        try:
            for line in process.stdout:
                lines.append(line.rstrip("\n"))
                if any(mark in line for mark in LOADED) or time.monotonic() > deadline:
                    break
        finally:
            process.kill()
    return lines


def test_n_cpu_moe_moves_exactly_the_planned_expert_tensors(llama_server_bin, quantized_models):
    model = quantized_models("qwen3moe", "Q4_K_M")
    info = read_model_info(model)
    log = _load_log(llama_server_bin, model, "--n-cpu-moe", "2")
    assert any(mark in line for line in log for mark in LOADED), "\n".join(log[-30:])
    moved = {m["name"] for m in map(OVERRIDDEN.search, log) if m}
    planned = {t.name for t in info.tensors if t.layer in (0, 1) and is_expert_tensor(t.name)}
    assert planned and moved == planned, (sorted(moved ^ planned), "\n".join(log[-30:]))
    split = expert_split(info)
    assert split.moved_to_cpu(2) == sum(t.n_bytes for t in info.tensors if t.name in moved)
