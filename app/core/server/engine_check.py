"""Run an engine's self-test (app.core.engine.selftest): the built-in engine loads the models in a child process,
llama-server serves each of them under the supervisor, as it serves a model, and generates a few tokens."""

from __future__ import annotations

import time
from pathlib import Path

from app.core.engine.cpu_isa import _verdict_from_exit
from app.core.engine.selftest import (
    CHILD_TIMEOUT_S,
    GENERATE_TOKENS,
    EngineCheck,
    Outcome,
    QuantResult,
    checked,
    run_embedded_check,
)
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.server.supervisor import State, Supervisor


def run_check(engine: str, server_bin: str | None = None, *, use_cache: bool = True) -> EngineCheck:
    """The kept self-test of this engine build on this processor, or a new one (``use_cache=False``: always new)."""
    if engine == "embedded":
        return run_embedded_check(server_bin, use_cache=use_cache)
    return checked(engine, server_bin, lambda models: tuple(_check_llama_server(quant, path, server_bin)
                                                            for quant, path in models.items()), use_cache=use_cache)


def _check_llama_server(quant: str, path: Path, server_bin: str | None) -> QuantResult:
    import httpx

    config = LaunchConfig(model=str(path), backend="llama-server", server_bin=server_bin, ctx=128, threads=1,
                          port=find_free_port())
    supervisor = Supervisor(config, auto_restart=False)
    started = time.monotonic()
    try:
        supervisor.start()
        if supervisor.wait_for({State.READY, State.FAILED, State.CRASHED}, CHILD_TIMEOUT_S) is not State.READY:
            return _server_failure(quant, supervisor)
        try:
            reply = httpx.post(f"{supervisor.url}/completion", timeout=CHILD_TIMEOUT_S,
                               headers={"Authorization": f"Bearer {supervisor.api_key}"},
                               json={"prompt": "Hello", "n_predict": GENERATE_TOKENS, "ignore_eos": True,
                                     "temperature": 0})
            tokens = int(reply.json().get("tokens_predicted", 0))
        except (httpx.HTTPError, ValueError) as exc:
            supervisor.wait_for({State.CRASHED, State.FAILED}, 5.0)
            return _server_failure(quant, supervisor, fallback=str(exc))
        if tokens <= 0:
            return QuantResult(quant, Outcome.FAILED, "generated no tokens")
        return QuantResult(quant, Outcome.RUNS, f"{tokens} tokens in {time.monotonic() - started:.2f} s")
    finally:
        supervisor.close()


def _server_failure(quant: str, supervisor, fallback: str = "") -> QuantResult:
    child = supervisor.child
    returncode = child.returncode if child is not None else None
    if returncode is not None and returncode < 0:
        _, reason = _verdict_from_exit(returncode, "")
        return QuantResult(quant, Outcome.CRASHED, reason)
    diagnosis = supervisor.last_diagnosis
    detail = diagnosis.render("en") if diagnosis is not None else fallback or "the server did not start"
    return QuantResult(quant, Outcome.FAILED, detail[:300])
