"""Every generated architecture x {F16, Q4_0, Q4_K_M, Q8_0} loads in both real engines and generates tokens.

llama-server: one supervised child per model, started the way the app starts it. Built-in engine: one
llama-cpp-python server for the whole matrix (a config file with one entry per model; it swaps the model per
request, ~0.1 s each), since each interpreter start costs seconds on 2 cores. If a model crashes that shared
server, its test fails with the server's log and the server is started again for the next model.

With llama-server each answer's log-probabilities must also be finite numbers: a quantized kernel that computes
garbage (NaN) fails there even when it does not crash. (The built-in engine runs as the app runs it, with
``logits_all`` off, so it reports no log-probabilities.)
"""

from __future__ import annotations

import json
import math
import time
from collections import deque
from pathlib import Path

import httpx
import pytest

from app.core.launch.backends import embedded_server_prefix
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.process.child import ChildProcess
from app.core.server.supervisor import State, Supervisor
from tests.conftest import GENERATED_ARCHS, QUANTS

pytestmark = pytest.mark.slow

DTYPES = ("F16", *QUANTS)
MATRIX = [pytest.param(arch, dtype, id=f"{arch}-{dtype}") for arch in GENERATED_ARCHS for dtype in DTYPES]
PROMPT = "The capital of France is"
N_PREDICT = 4
CTX = 256
READY_S = 90.0


def _finite(values: list[float]) -> bool:
    return bool(values) and all(isinstance(v, (int, float)) and not math.isnan(v) for v in values)


# -- llama-server: one supervised child per model ---------------------------------------------------------------


@pytest.mark.parametrize("arch, dtype", MATRIX)
def test_llama_server_loads_and_generates(arch, dtype, quantized_models, llama_server_bin):
    model = quantized_models(arch, dtype)
    config = LaunchConfig(model=str(model), backend="llama-server", server_bin=llama_server_bin, ctx=CTX, threads=1,
                          batch=128, ubatch=128, port=find_free_port())
    supervisor = Supervisor(config, auto_restart=False)
    auth = {"Authorization": f"Bearer {supervisor.api_key}"}
    try:
        supervisor.start()
        state = supervisor.wait_for({State.READY, State.FAILED, State.CRASHED}, READY_S)
        log = "\n".join(line.text for line in supervisor.tail(25))
        assert state is State.READY, f"{arch} {dtype} did not load in llama-server ({state}): " \
                                     f"{supervisor.last_diagnosis}\n{log}"
        reply = httpx.post(supervisor.url + "/completion", timeout=60, headers=auth, json={
            "prompt": PROMPT, "n_predict": N_PREDICT, "ignore_eos": True, "temperature": 0, "n_probs": 1})
        assert reply.status_code == 200, reply.text
        body = reply.json()
        assert body["tokens_predicted"] == N_PREDICT, body
        logprobs = [p["logprob"] for p in body.get("completion_probabilities", [])]
        assert len(logprobs) == N_PREDICT and _finite(logprobs), body.get("completion_probabilities")
        props = httpx.get(supervisor.url + "/props", timeout=10, headers=auth).json()
        assert Path(props["model_path"]) == model
        assert props.get("chat_template"), "llama-server did not read the file's chat template"
    finally:
        supervisor.close()


# -- built-in engine: one llama-cpp-python server for the matrix --------------------------------------------------


class MatrixServer:
    """``python -m llama_cpp.server --config_file`` with one entry per model (alias ``arch-dtype``), each with the
    settings the app passes (app/core/launch/backends.py: one thread, logits_all off)."""

    def __init__(self, models: dict[str, Path], folder: Path):
        self.models = models
        self.config = folder / "matrix.json"
        self.lines: deque[str] = deque(maxlen=60)
        self.child: ChildProcess | None = None

    def start(self) -> None:
        port = find_free_port()
        entries = [{"model": str(path), "model_alias": alias, "n_ctx": CTX, "n_threads": 1, "n_threads_batch": 1,
                    "n_batch": 128, "n_ubatch": 128, "logits_all": False, "verbose": True}
                   for alias, path in self.models.items()]
        self.config.write_text(json.dumps({"host": "127.0.0.1", "port": port, "models": entries}), encoding="utf-8")
        self.url = f"http://127.0.0.1:{port}"
        self.lines.clear()
        self.child = ChildProcess([*embedded_server_prefix(), "--config_file", str(self.config)],
                                  on_line=lambda _s, text: self.lines.append(text), on_exit=lambda *_: None,
                                  register=False)
        deadline = time.monotonic() + READY_S
        while time.monotonic() < deadline and self.child.running:
            try:
                listed = httpx.get(self.url + "/v1/models", timeout=2)
                if listed.status_code == 200:
                    ids = {m["id"] for m in listed.json()["data"]}
                    assert ids == set(self.models), ids  # an unknown alias would silently get the first model
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"the built-in engine did not start: {self.log()}")

    def ensure_running(self) -> None:
        if self.child is None or not self.child.running:
            self.start()

    def log(self) -> str:
        return "\n".join(self.lines)

    def close(self) -> None:
        if self.child is not None:
            self.child.stop(grace_s=3.0)


@pytest.fixture(scope="module")
def matrix_server(quantized_models, tmp_path_factory):
    server = MatrixServer({f"{arch}-{dtype}": quantized_models(arch, dtype) for arch in GENERATED_ARCHS
                           for dtype in DTYPES}, tmp_path_factory.mktemp("matrix"))
    yield server
    server.close()


@pytest.mark.parametrize("arch, dtype", MATRIX)
def test_builtin_engine_loads_and_generates(arch, dtype, matrix_server):
    matrix_server.ensure_running()
    alias = f"{arch}-{dtype}"
    try:
        reply = httpx.post(matrix_server.url + "/v1/completions", timeout=60, json={
            "model": alias, "prompt": PROMPT, "max_tokens": N_PREDICT, "temperature": 0})
    except httpx.HTTPError as error:
        matrix_server.child.wait(5)
        raise AssertionError(f"{alias}: the built-in engine died ({matrix_server.child.returncode}) on it: {error}\n"
                             f"{matrix_server.log()}") from None
    assert reply.status_code == 200, f"{alias}: {reply.text}\n{matrix_server.log()}"
    choice = reply.json()["choices"][0]
    assert choice["finish_reason"] == "length" and reply.json()["usage"]["completion_tokens"] == N_PREDICT, \
        reply.json()
