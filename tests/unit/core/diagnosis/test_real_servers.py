"""The crash decoder on the real last words of llama-server and llama-cpp-python when they refuse to start.

Each case starts the real program on a broken input (truncated / foreign / version-1 file, busy port, bad flag,
memory limit); all of them exit within seconds without ever serving, but each is a real engine start (about 1 s
on 2 cores), so the module is in the slow lane.
"""

from __future__ import annotations

import resource
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from app.core.diagnosis import diagnose, oom_evidence_since, snapshot_oom_counters
from app.core.launch.config import LaunchConfig
from app.core.problem import change_settings
from tests.unit.core.diagnosis.test_oom_and_processes import join_cgroup, memory_cgroup_for_test

pytestmark = pytest.mark.slow  # real llama-server / llama-cpp-python starts

TIMEOUT_S = 60


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run(argv: list[str], **popen) -> tuple[int, list[str]]:
    done = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=TIMEOUT_S,
                          stdin=subprocess.DEVNULL, **popen)
    return done.returncode, (done.stdout + done.stderr).splitlines()


@pytest.fixture(scope="module")
def broken_models(tmp_path_factory, tiny_model) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("broken")
    data = Path(tiny_model).read_bytes()
    truncated = folder / "truncated.gguf"
    truncated.write_bytes(data[: len(data) * 2 // 3])
    html = folder / "download.gguf"
    html.write_bytes(b"<!DOCTYPE html><html><body>Sign in to download</body></html>\n" * 20)
    v1 = folder / "old-v1.gguf"
    v1.write_bytes(b"GGUF" + struct.pack("<I", 1) + struct.pack("<II", 0, 0) + b"\0" * 64)
    return {"truncated": truncated, "not_gguf": html, "v1": v1, "missing": folder / "gone.gguf"}


# --- llama-server ------------------------------------------------------------------------------------------------

def server_argv(binary: str, model: Path | str, *extra: str) -> list[str]:
    return [binary, "-m", str(model), "--host", "127.0.0.1", "--port", str(free_port()), "-c", "512", "-t", "1", *extra]


@pytest.mark.parametrize(("model_key", "cause"), [
    ("truncated", "model_truncated"), ("not_gguf", "not_gguf"), ("v1", "gguf_too_old"), ("missing", "model_not_found"),
])
def test_llama_server_on_broken_files(llama_server_bin, broken_models, model_key, cause):
    model = broken_models[model_key]
    code, lines = run(server_argv(llama_server_bin, model))
    diagnosis = diagnose(code, lines, LaunchConfig(model=str(model), backend="llama-server"))
    assert code == 1, lines[-10:]
    assert diagnosis.cause == cause, lines[-15:]
    assert diagnosis.restartable is False and diagnosis.action is None


def write_split_part(path: Path, split_no: int, split_count: int = 2) -> Path:
    """One part of a split GGUF (split.* keys and one tensor): enough for llama.cpp's split checks."""
    import gguf
    import numpy as np

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_uint16("split.no", split_no)
    writer.add_uint16("split.count", split_count)
    writer.add_int32("split.tensors.count", 1)
    writer.add_tensor("token_embd.weight", np.zeros((4, 4), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_llama_server_on_split_models(llama_server_bin, tmp_path):
    first = write_split_part(tmp_path / "big-00001-of-00002.gguf", 0)
    second = write_split_part(tmp_path / "big-00002-of-00002.gguf", 1)
    code, lines = run(server_argv(llama_server_bin, second))
    wrong_part = diagnose(code, lines, LaunchConfig(model=str(second), backend="llama-server"))
    assert wrong_part.cause == "wrong_split_part", lines[-8:]
    assert wrong_part.action == change_settings({"model": str(first)})
    second.unlink()
    code, lines = run(server_argv(llama_server_bin, first))
    missing = diagnose(code, lines, LaunchConfig(model=str(first), backend="llama-server"))
    assert missing.cause == "split_part_missing", lines[-8:]
    assert missing.restartable is False


def test_llama_server_on_a_busy_port(llama_server_bin, tiny_model):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        argv = [llama_server_bin, "-m", str(tiny_model), "--host", "127.0.0.1", "--port", str(port), "-t", "1"]
        code, lines = run(argv)
    diagnosis = diagnose(code, lines, LaunchConfig(model=str(tiny_model), backend="llama-server", port=port))
    assert diagnosis.cause == "port_in_use", lines[-10:]
    assert diagnosis.action == change_settings({"port": 0})
    assert str(port) in diagnosis.message.render("en")


def test_llama_server_rejects_an_unknown_flag(llama_server_bin, tiny_model):
    config = LaunchConfig(model=str(tiny_model), backend="llama-server", extra_args=("--no-such-flag",))
    code, lines = run(server_argv(llama_server_bin, tiny_model, "--no-such-flag"))
    diagnosis = diagnose(code, lines, config)
    assert code != 0
    assert diagnosis.cause == "bad_argument", lines[-10:]
    assert diagnosis.action == change_settings({"extra_args": []})


def limit_address_space(limit_bytes: int):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    return apply


@pytest.fixture(scope="module")
def wide_model(tmp_path_factory):
    """8 layers x 512 dims: a 262144-token f16 KV cache needs 4 GiB, far over the limits below."""
    from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama

    spec = TinyModelSpec(n_layers=8, n_embd=512, n_head=8, n_head_kv=8, n_ff=512, ctx_train=262144)
    return write_tiny_llama(tmp_path_factory.mktemp("wide") / "wide.gguf", spec)


def test_llama_server_under_a_memory_limit(llama_server_bin, wide_model):
    """The KV cache cannot be allocated under the address-space limit: llama.cpp's own words are decoded."""
    config = LaunchConfig(model=str(wide_model), backend="llama-server", ctx=262144)
    argv = [llama_server_bin, "-m", str(wide_model), "--port", str(free_port()), "-c", "262144", "-t", "1",
            "--no-warmup"]
    code, lines = run(argv, preexec_fn=limit_address_space(1536 * 1024**2))
    diagnosis = diagnose(code, lines, config)
    assert code == 1, lines[-10:]
    assert diagnosis.cause == "context_out_of_memory", lines[-15:]
    assert diagnosis.action == change_settings({"ctx": 131072})
    assert "4.0 GiB" in diagnosis.message.render("zh")


def test_llama_server_refusing_a_quantized_v_cache_is_no_memory_problem(llama_server_bin, tiny_model):
    """A setting llama.cpp refuses while it sets up the context: its own words, not 'out of memory' nor a broken
    model file (llama-server then says 'exiting due to model loading error')."""
    code, lines = run(server_argv(llama_server_bin, tiny_model, "-ctv", "q8_0", "-fa", "off", "--no-warmup"))
    diagnosis = diagnose(code, lines, LaunchConfig(model=str(tiny_model), backend="llama-server", ctx=512))
    assert diagnosis.cause == "context_rejected", lines[-10:]
    assert "quantized V cache requires flash_attn" in diagnosis.message.render("en")
    assert diagnosis.action is None and not diagnosis.restartable


def test_llama_server_with_almost_no_address_space(llama_server_bin, tiny_model):
    """64 MiB: worker threads cannot start and the crash handler cannot start gdb; not a missing library."""
    argv = server_argv(llama_server_bin, tiny_model, "--no-warmup")
    code, lines = run(argv, preexec_fn=limit_address_space(64 * 1024**2))
    diagnosis = diagnose(code, lines, LaunchConfig(model=str(tiny_model), backend="llama-server", ctx=512))
    assert code != 0, lines[-10:]
    assert diagnosis.cause == "ram_out_of_memory", lines[-10:]


def test_llama_server_killed_by_the_kernel_oom_killer(llama_server_bin, wide_model):
    """The seed report's 'exit code 137': the kernel kills llama-server while it fills a 4 GiB KV cache in a 768 MiB
    memory cgroup. Without permission to make a cgroup, the same evidence path must not claim memory ran out."""
    config = LaunchConfig(model=str(wide_model), backend="llama-server", ctx=262144)
    argv = [llama_server_bin, "-m", str(wide_model), "--port", str(free_port()), "-c", "262144", "-t", "1",
            "--no-warmup"]
    with memory_cgroup_for_test(768 * 1024**2) as cgroup:
        counter_path = str(cgroup[0] / cgroup[1]) if cgroup else None
        before = snapshot_oom_counters(cgroup_events_path=counter_path)
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 preexec_fn=join_cgroup(cgroup[0]) if cgroup else None)
        samples = sample_rss(child, seconds=TIMEOUT_S if cgroup else 1.0)
        if cgroup is None:
            child.kill()
        output = child.communicate(timeout=TIMEOUT_S)[0]
        evidence = oom_evidence_since(before, child.pid, cgroup_events_path=counter_path)
    diagnosis = diagnose(child.returncode, output, config, oom_evidence=evidence, rss_samples=samples)
    assert child.returncode == -9 and diagnosis.signal == "SIGKILL"
    if cgroup is not None:
        assert diagnosis.cause == "oom_killed", (evidence, output[-500:])
        assert "ran out of memory" in diagnosis.message.render("en")
        assert diagnosis.action == change_settings({"ctx": 131072})
        assert diagnosis.restartable is False  # killed while loading: the same settings would be killed again
    else:  # killed by the test: no memory fix without memory evidence
        assert diagnosis.cause in ("killed", "killed_from_outside") and diagnosis.action is None


def sample_rss(child: subprocess.Popen, seconds: float) -> list[tuple[float, int]]:
    """RSS every 50 ms until the child exits, for at most ``seconds``."""
    samples: list[tuple[float, int]] = []
    deadline = time.monotonic() + seconds
    process = psutil.Process(child.pid)
    while child.poll() is None and time.monotonic() < deadline:
        try:
            samples.append((time.monotonic(), process.memory_info().rss))
        except psutil.Error:
            break
        time.sleep(0.05)
    return samples


# --- llama-cpp-python's server (the built-in backend) ------------------------------------------------------------

def embedded_argv(model: Path | str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
            "--port", str(free_port()), "--n_ctx", "512", *extra]


@pytest.mark.parametrize(("model_key", "causes"), [
    ("truncated", ("model_truncated",)), ("not_gguf", ("not_gguf",)), ("missing", ("model_not_found",)),
])
def test_embedded_server_on_broken_files(broken_models, model_key, causes):
    model = broken_models[model_key]
    code, lines = run(embedded_argv(model))
    diagnosis = diagnose(code, lines, LaunchConfig(model=str(model)))
    assert code != 0
    assert diagnosis.cause in causes, lines[-15:]
    assert diagnosis.restartable is False


def test_embedded_server_on_a_busy_port(tiny_model):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        argv = embedded_argv(tiny_model)
        argv[argv.index("--port") + 1] = str(port)
        code, lines = run(argv)
    diagnosis = diagnose(code, lines, LaunchConfig(model=str(tiny_model), port=port))
    assert diagnosis.cause == "port_in_use", lines[-10:]
    assert diagnosis.action == change_settings({"port": 0})


def test_embedded_server_under_a_memory_limit(wide_model):
    argv = embedded_argv(wide_model)
    argv[argv.index("--n_ctx") + 1] = "262144"
    code, lines = run(argv, preexec_fn=limit_address_space(2048 * 1024**2))
    diagnosis = diagnose(code, lines, LaunchConfig(model=str(wide_model), ctx=262144))
    assert code == 1, lines[-10:]
    assert diagnosis.cause == "context_out_of_memory", lines[-15:]
    assert diagnosis.action == change_settings({"ctx": 131072})


def test_embedded_server_rejects_a_bad_option(tiny_model):
    code, lines = run(embedded_argv(tiny_model, "--n_gpu_layerz", "3"))
    diagnosis = diagnose(code, lines, LaunchConfig(model=str(tiny_model), extra_args=("--n_gpu_layerz", "3")))
    assert code == 2
    assert diagnosis.cause == "bad_argument", lines[-10:]
    assert diagnosis.action == change_settings({"extra_args": []})

