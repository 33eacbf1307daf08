"""Real CPU probes: llama-server children under a real memory cap (RLIMIT_DATA) on a generated model
whose KV cache dominates (16 KiB per token, 128 MiB at 8192 tokens), checked against a linear scan of
real loads. A micro-batch of 128 and one thread keep each test prompt cheap on 2 busy cores (llama.cpp's
spinning thread barriers crawl when the cores are oversubscribed)."""

from __future__ import annotations

import json
import re
import resource
import threading
import time

import httpx
import psutil
import pytest

from app.cli import main
from app.core.gguf.reader import read_model_info
from app.core.hardware.scan import scan_hardware
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.plan.budget import Margins
from app.core.probe import ProbeCancelled, ProbeOptions, max_loads, run_probe
from app.core.probe.evidence import MEMORY_CAUSES
from app.core.server.supervisor import State, Supervisor
from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama

MiB = 1024**2
# 32 layers x 2 KV heads x 64 dims x (K + V) x 2 bytes = 16 KiB of KV cache per token; few weights, so
# each test prompt is cheap
KV_SPEC = TinyModelSpec(n_layers=32, n_embd=128, n_head=2, n_head_kv=2, n_ff=128, ctx_train=32768, f16=True,
                        name="kv-heavy")
KV_PER_TOKEN = 32 * 2 * 64 * 2 * 2
NO_MARGIN = Margins(ram_min_bytes=0, ram_fraction=0.0)
TOP_CTX = 8192


@pytest.fixture(scope="module")
def kv_model(tmp_path_factory):
    return write_tiny_llama(tmp_path_factory.mktemp("kv") / "kv-heavy.gguf", KV_SPEC)


def server_config(model, server_bin, ctx) -> LaunchConfig:
    return LaunchConfig(model=str(model), backend="llama-server", server_bin=server_bin, ctx=ctx, threads=1,
                        batch=128, ubatch=128, port=find_free_port())


def load_once(config: LaunchConfig, data_cap: int | None) -> tuple[bool, int]:
    """The test's own judge, independent of the probe: load, evaluate ~150 prompt tokens, report VmData."""
    rlimits = {resource.RLIMIT_DATA: data_cap} if data_cap else None
    supervisor = Supervisor(config.with_changes(port=find_free_port()), auto_restart=False, rlimits=rlimits,
                            ready_timeout_s=60)
    try:
        supervisor.start()
        state = supervisor.wait_for({State.READY, State.FAILED, State.CRASHED}, 60)
        if state is not State.READY:
            return False, 0
        try:
            reply = httpx.post(supervisor.url + "/completion", json={"prompt": "x" * 150, "n_predict": 4}, timeout=60,
                               headers={"Authorization": f"Bearer {supervisor.api_key}"})
        except httpx.HTTPError:  # the server died evaluating the prompt
            return False, 0
        return reply.status_code == 200, _vm_data(supervisor.pid)
    finally:
        supervisor.close()


def _vm_data(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmData:"):
                return int(line.split()[1]) * 1024
    return 0


@pytest.fixture(scope="module")
def data_cap(kv_model, llama_server_bin):
    """A cap that puts the boundary near 3072 tokens: VmData at 1024 tokens + 2048 tokens of KV cache."""
    ok, vm_data = load_once(server_config(kv_model, llama_server_bin, 1024), None)
    assert ok and vm_data > 0
    return vm_data + 2048 * KV_PER_TOKEN + 128 * 1024


def linear_truth(kv_model, server_bin, cap) -> int:
    """Scan real loads in steps of 256 around the predicted boundary; the highest ctx below the first failure."""
    ctx = 3072 - 768
    if not load_once(server_config(kv_model, server_bin, ctx), cap)[0]:
        while ctx > 256 and not load_once(server_config(kv_model, server_bin, ctx - 256), cap)[0]:
            ctx -= 256
        return ctx - 256
    while ctx + 256 <= TOP_CTX and load_once(server_config(kv_model, server_bin, ctx + 256), cap)[0]:
        ctx += 256
    return ctx


def test_probe_lands_within_one_step_of_the_real_boundary_then_hits_the_cache(kv_model, llama_server_bin, data_cap):
    info = read_model_info(kv_model)
    hw = scan_hardware()
    hw.gpus = []  # the CPU path, even on a machine with a GPU
    config = server_config(kv_model, llama_server_bin, TOP_CTX)
    options = ProbeOptions(ram_budget=data_cap, margins=NO_MARGIN, rlimits={resource.RLIMIT_DATA: data_cap})
    events = []
    result = run_probe(info, config, hw, options, progress=events.append)
    found = result.recommendation.ctx
    truth = linear_truth(kv_model, llama_server_bin, data_cap)
    assert abs(found - truth) <= 256, (found, truth, [a.to_dict("en") for a in result.attempts])
    assert result.recommendation.gpu_layers == 0 and not result.cached
    assert any(not a.ok for a in result.attempts) and len(result.attempts) <= max_loads(TOP_CTX // 256, seeded=True)
    failures = [a.to_dict("en") for a in result.attempts if not a.ok]
    assert all(f["cause"] in MEMORY_CAUSES and f["diagnosis"]["message"] for f in failures), failures
    passing = result.passing_attempt
    assert passing.peak_rss_bytes > found * KV_PER_TOKEN  # the KV cache really was resident
    assert [e.attempt for e in events if e.phase == "ctx"] == list(range(1, len(result.attempts) + 1))

    started = time.monotonic()
    again = run_probe(info, config, hw, options)
    assert again.cached and again.recommendation == result.recommendation
    assert time.monotonic() - started < 2.0


def _server_children() -> list[psutil.Process]:
    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if "llama-server" in " ".join(proc.cmdline()) and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except psutil.Error:  # exited meanwhile
            pass
    return found


def test_cancel_kills_the_child_and_leaves_nothing(kv_model, llama_server_bin):
    info = read_model_info(kv_model)
    hw = scan_hardware()
    hw.gpus = []
    cancel = threading.Event()
    outcome = {}

    def probe():
        try:
            run_probe(info, server_config(kv_model, llama_server_bin, TOP_CTX), hw, ProbeOptions(use_cache=False),
                      cancel=cancel)
        except ProbeCancelled as error:
            outcome["cancelled"] = error

    worker = threading.Thread(target=probe)
    worker.start()
    deadline = time.monotonic() + 30
    children = []
    while not children and time.monotonic() < deadline:
        children = _server_children()
        time.sleep(0.01)
    assert children, "no llama-server child was started"
    cancel.set()
    worker.join(30)
    assert not worker.is_alive() and "cancelled" in outcome
    for proc in children:
        with pytest.raises(psutil.NoSuchProcess):
            psutil.Process(proc.pid).status()
    assert _server_children() == []


def test_probe_cli_json_with_the_embedded_engine(tiny_model, capsys):
    code = main(["probe", str(tiny_model), "--ctx", "512", "--backend", "embedded", "--json"])
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert code == 0, captured.err
    assert set(data["recommendation"]) == {"gpu_layers", "ctx", "n_cpu_moe"} and data["recommendation"]["ctx"] == 512
    assert data["cached"] is False and data["plan"]["n_layer"] == 2
    attempt = data["attempts"][0]
    assert {"gpu_layers", "ctx", "ok", "peak_rss_bytes", "peak_vram_bytes", "seconds", "diagnosis"} <= set(attempt)
    assert attempt["ok"] is True and attempt["peak_rss_bytes"] > 20 * MiB
    assert "Test load 1 of at most" in captured.err
    # the attempt line tells the measured peak from the full-context projection (issue 22)
    line = re.search(r"-> passed; peak RAM ([\d.]+) MiB measured, about ([\d.]+) MiB with a full context", captured.err)
    assert line and float(line[1]) < float(line[2]), captured.err
    assert attempt["full_context_rss_bytes"] > attempt["peak_rss_bytes"]
    assert main(["probe", str(tiny_model), "--ctx", "512", "--backend", "embedded", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cached"] is True


def test_probe_cli_runs_llama_server_by_default(tiny_model, capsys):
    code = main(["probe", str(tiny_model), "--ctx", "512", "--json"])
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert code == 0, captured.err
    assert data["backend"]["kind"] == "llama-server" and data["attempts"][0]["ok"] is True
    assert "built-in engine" not in captured.err  # no fallback sentence: llama-server runs here
