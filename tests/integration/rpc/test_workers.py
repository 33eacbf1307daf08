"""Two real rpc-server workers on 127.0.0.1 and a real llama-server --rpc: a generated model split across them
loads and answers, the plan's per-worker numbers match what the workers really hold, and a worker killed mid-chat
is a diagnosis whose fix (restart without it) works."""

from __future__ import annotations

import threading
import time

import httpx
import psutil
import pytest

from app.core.gguf.reader import read_model_info
from app.core.hardware.scan import scan_hardware
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.plan.llama_report import parse_llama_log
from app.core.plan.memory import make_plan
from app.core.rpc.check import check_workers
from app.core.server.shared_worker import SharedWorker
from app.core.server.supervisor import State, Supervisor
from app.core.synthetic import SyntheticSpec, write_model

pytestmark = pytest.mark.slow
MiB = 1024**2
# 8 layers of ~6 MiB (F16) and 2 MiB of KV each at 2048 tokens: big enough that each worker's share is visible
SPEC = SyntheticSpec(n_layers=8, n_embd=512, n_head=8, n_head_kv=4, n_ff=1536, ctx_train=4096)
CHAT = {"messages": [{"role": "user", "content": "Say something."}], "max_tokens": 24, "temperature": 0}
READY_S = 90.0


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return write_model("llama", tmp_path_factory.mktemp("rpc") / "split.gguf", SPEC)


@pytest.fixture
def workers(llama_server_bin):
    started = [SharedWorker(port=find_free_port(), threads=1, server_bin=llama_server_bin) for _ in range(2)]
    for worker in started:
        worker.start()
        worker.wait_ready()
    yield started
    for worker in started:
        worker.stop()


def _config(model, llama_server_bin, workers, **changes) -> LaunchConfig:
    return LaunchConfig(model=str(model), backend="llama-server", server_bin=llama_server_bin, ctx=2048, threads=1,
                        gpu_layers=-1, port=find_free_port(), rpc_workers=tuple(w.worker.address for w in workers),
                        **changes)


def _started(config: LaunchConfig, *, auto_restart: bool = False) -> Supervisor:
    supervisor = Supervisor(config, auto_restart=auto_restart)
    supervisor.start()
    state = supervisor.wait_for({State.READY, State.FAILED}, READY_S)
    assert state is State.READY, f"{state}: {supervisor.last_diagnosis}; {supervisor.tail(30)}"
    return supervisor


def _chat(supervisor: Supervisor, **extra) -> dict:
    reply = httpx.post(supervisor.url + "/v1/chat/completions", json=CHAT | extra, timeout=120,
                       headers={"Authorization": f"Bearer {supervisor.api_key}"})
    assert reply.status_code == 200, reply.text
    return reply.json()


def _rss(worker: SharedWorker) -> int:
    return psutil.Process(worker.child.pid).memory_info().rss


def test_split_across_two_workers_loads_answers_and_matches_the_plan(model, llama_server_bin, workers):
    config = _config(model, llama_server_bin, workers, tensor_split=(2, 1), extra_args=("-lv", "4"))
    assert all(c.usable for c in check_workers([w.worker for w in workers]))
    plan = make_plan(read_model_info(model), config, scan_hardware())
    first, second = plan.devices[:2]
    assert (first.layers, second.layers, second.output_layer) == (6, 2, True)  # -ts 2,1 over 8 layers + output
    before = [_rss(w) for w in workers]
    supervisor = _started(config)
    try:
        assert _chat(supervisor)["choices"][0]["message"]["content"] is not None
        held = [_rss(w) - b for w, b in zip(workers, before, strict=True)]
    finally:
        supervisor.close()  # stopped, and its log file closed (stop() alone left it to the garbage collector)
    # llama.cpp's own table at exit, one row per worker: "RPC0 (127.0.0.1:PORT) | ... (self = model + context +
    # compute)": the buffers the client allocated on that worker (ALLOC_BUFFER), what a GPU worker's VRAM must hold
    rows = {row.description: row for row in parse_llama_log(line.text for line in supervisor.tail(4000)).devices}
    for worker, planned, grew in zip(workers, (first, second), held, strict=True):
        row = rows[worker.worker.address]
        print(f"{worker.worker.address}: plan {planned.total_bytes / MiB:.1f} MiB (weights "
              f"{planned.weights_bytes / MiB:.1f}, KV {planned.kv_bytes / MiB:.1f}, compute "
              f"{planned.compute_bytes / MiB:.1f}); llama.cpp {row.self_mib} MiB (model {row.model_mib}, context "
              f"{row.context_mib}, compute {row.compute_mib}); worker RSS grew {grew / MiB:.1f} MiB")
        # a CPU worker's RSS holds the weights and the cleared KV cache; of its compute buffer only the pages a
        # micro-batch touched, so RSS is a floor here, not the allocation
        assert planned.weights_bytes + planned.kv_bytes <= grew + 2 * MiB
        assert abs(planned.total_bytes / MiB - row.self_mib) <= 0.15 * row.self_mib + 1  # the table rounds down


def test_a_worker_killed_mid_chat_is_diagnosed_and_the_restart_without_it_works(model, llama_server_bin, workers):
    supervisor = _started(_config(model, llama_server_bin, workers), auto_restart=True)  # as the window runs it
    try:
        first_token = threading.Event()

        def stream() -> None:
            body = CHAT | {"max_tokens": 2000, "stream": True, "ignore_eos": True}
            try:
                with httpx.stream("POST", supervisor.url + "/v1/chat/completions", json=body, timeout=60,
                                  headers={"Authorization": f"Bearer {supervisor.api_key}"}) as r:
                    for _ in r.iter_lines():
                        first_token.set()
            except httpx.HTTPError:
                pass  # the server died under it: that is the point
            first_token.set()

        talker = threading.Thread(target=stream, daemon=True)
        talker.start()
        assert first_token.wait(60)
        gone = workers[1]
        gone.child.kill()
        assert supervisor.wait_for(State.FAILED, 30) is State.FAILED
        talker.join(10)
        diagnosis = supervisor.last_diagnosis
        assert diagnosis.cause == "worker_lost", (diagnosis, supervisor.tail(20))
        assert diagnosis.message.render("en") == (f"The worker at {gone.worker.address} stopped answering, "
                                                  "so the model server stopped too.")
        print("evidence:", diagnosis.evidence[0])
        assert any("Remote RPC server crashed" in line for line in diagnosis.evidence)
        assert diagnosis.action.changes == {"rpc_workers": [workers[0].worker.address]}
        supervisor.apply_fix_and_restart(diagnosis.action.changes)
        assert supervisor.wait_for({State.READY, State.FAILED}, READY_S) is State.READY, supervisor.tail(20)
        assert supervisor.config.rpc_workers == (workers[0].worker.address,)
        assert _chat(supervisor)["choices"][0]["message"]["content"] is not None
    finally:
        supervisor.close()


def test_tokens_per_second_local_only_and_over_two_workers(model, llama_server_bin, workers, record_property):
    """Loopback measures the protocol's cost, not a speed-up: every token crosses both workers and back."""
    speeds = {}
    for name, addresses in (("local", ()), ("two workers", None)):
        config = _config(model, llama_server_bin, workers)
        if addresses is not None:
            config = config.with_changes(rpc_workers=addresses)
        supervisor = _started(config)
        try:
            _chat(supervisor)  # warm-up
            started = time.monotonic()
            timings = _chat(supervisor, max_tokens=64, ignore_eos=True)["timings"]
            speeds[name] = timings["predicted_per_second"]
            assert time.monotonic() - started < 60
        finally:
            supervisor.close()
    print(f"tokens/s: local {speeds['local']:.1f}, two workers on loopback {speeds['two workers']:.1f}")
    record_property("tokens_per_second", speeds)
    assert speeds["local"] > 0 and speeds["two workers"] > 0


def test_the_probe_proves_the_split_over_workers_with_real_loads(model, llama_server_bin, workers):
    from app.core.probe.probe import ProbeOptions, run_probe

    config = _config(model, llama_server_bin, workers)
    result = run_probe(read_model_info(model), config, scan_hardware(), ProbeOptions(use_cache=False))
    assert result.recommendation is not None and result.recommendation.gpu_layers == SPEC.n_layers + 1
    assert result.attempts and all(a.ok for a in result.attempts)  # seeded by the plan: every layer on the workers


def test_a_worker_that_is_not_running_at_start_is_named(model, llama_server_bin):
    gone = f"127.0.0.1:{find_free_port()}"
    config = LaunchConfig(model=str(model), backend="llama-server", server_bin=llama_server_bin, ctx=512, threads=1,
                          gpu_layers=-1, port=find_free_port(), rpc_workers=(gone,))
    supervisor = Supervisor(config)  # auto-restart on: it still stops, the same start cannot help
    try:
        supervisor.start()
        assert supervisor.wait_for(State.FAILED, READY_S) is State.FAILED
        diagnosis = supervisor.last_diagnosis
        assert diagnosis.cause == "worker_unreachable", (diagnosis, supervisor.tail(10))
        assert diagnosis.message.render("en") == f"The model server could not connect to the worker at {gone}."
        assert diagnosis.action.changes == {"rpc_workers": []} and supervisor.restart_count == 0
    finally:
        supervisor.close()
