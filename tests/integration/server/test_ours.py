"""Before Ready, the answering server is proved to be ours: our child listens on the port and the server names our
model (issue 28: on Windows a second server on a busy port may take its answers over without failing).

Real servers only: both engines on the tiny model, and a foreign HTTP server (another program) that answers /health
and names another model. llama-server does not set SO_REUSEPORT (a second listener on its port gets EADDRINUSE on
Linux), so the takeover is played by pointing the readiness gate at the foreign server's port
(``Supervisor.probe_address``) while our server starts on its own.
"""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.server.identity import model_proof_of, prove_ours
from app.core.server.supervisor import State, Supervisor

BACKENDS = ("embedded", "llama-server")


class _Foreign(http.server.BaseHTTPRequestHandler):
    """Another program: healthy, and serving another model."""

    status = 200

    def do_GET(self) -> None:
        bodies = {"/health": {"status": "ok"}, "/props": {"model_path": "/elsewhere/other-model.gguf"},
                  "/v1/models": {"object": "list", "data": [{"id": "other-model.gguf", "object": "model"}]}}
        body = json.dumps(bodies.get(self.path, {"error": "not found"})).encode()
        status = self.status if self.path in bodies else 404
        self.send_response(status if self.path != "/health" else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args) -> None:
        pass


class _KeyRefusing(_Foreign):
    status = 401


def _serve(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def foreign_port() -> Iterator[int]:
    yield from _serve(_Foreign)


@pytest.fixture
def key_refusing_port() -> Iterator[int]:
    yield from _serve(_KeyRefusing)


@pytest.mark.parametrize("backend", BACKENDS)
def test_our_own_server_passes_both_proofs_before_ready(running_server, backend):
    supervisor = running_server(backend, supervisor_kwargs={"auto_restart": False})
    config, child = supervisor.config, supervisor.child
    assert child is not None and supervisor.proof_seconds is not None
    print(f"\n{backend}: proved ours in {1000 * supervisor.proof_seconds:.1f} ms "
          f"(load {1000 * (supervisor.load_seconds or 0):.0f} ms)")
    proof = prove_ours(child.pid, config.port, supervisor.url, api_key=config.api_key, model=config.model,
                       alias=Path(config.model).name, kind=backend)
    assert proof.ours is True, proof
    assert f"process {child.pid}" in proof.why and Path(config.model).name in proof.why


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_foreign_server_answering_the_gate_fails_the_start_naming_it(server_config, foreign_port, backend):
    config = server_config(backend)
    supervisor = Supervisor(config, auto_restart=False)
    supervisor.probe_address = ("127.0.0.1", foreign_port)
    try:
        supervisor.start()
        state = supervisor.wait_for({State.READY, State.FAILED}, 60)
        assert state is State.FAILED and State.READY not in [e.state for e in supervisor.history]
        diagnosis = supervisor.last_diagnosis
        assert diagnosis is not None and diagnosis.cause == "port_in_use", diagnosis
        message = diagnosis.message.render("en")
        print(f"\n{backend}: {message} {diagnosis.next_step.render('en')} | {diagnosis.evidence}")
        assert message.startswith(f"Port {foreign_port} is already used by ")
        assert f"(process {os.getpid()})" in message  # the foreign server runs in this test's process
        assert diagnosis.next_step.render("en") == "Let the app pick a free port and restart."
        assert diagnosis.action is not None and diagnosis.action.params == {"port": 0}
        assert "another program" in " ".join(diagnosis.evidence)
        child = supervisor.child
        assert child is None or not child.running  # our server was stopped, not left behind
    finally:
        supervisor.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_our_servers_model_is_named_by_its_answers(running_server, backend):
    supervisor = running_server(backend)
    config = supervisor.config
    proof = model_proof_of(supervisor.url, api_key=config.api_key, model=config.model,
                           alias=Path(config.model).name, kind=backend)
    assert proof.ours is True, proof
    wrong = model_proof_of(supervisor.url, api_key=config.api_key, model="/elsewhere/other.gguf",
                           alias="other.gguf", kind=backend)
    assert wrong.ours is False and "not other.gguf" in wrong.why, wrong
    refused = model_proof_of(supervisor.url, api_key="not-the-key", model=config.model,
                             alias=Path(config.model).name, kind=backend)
    assert refused.ours is False and "refused the app's key" in refused.why, refused


def test_a_server_naming_another_model_is_another_program(foreign_port, tiny_model):
    """Where the system does not say who listens (no process to ask), the model decides."""
    base = f"http://127.0.0.1:{foreign_port}"
    for kind in BACKENDS:
        proof = prove_ours(None, foreign_port, base, api_key="k", model=str(tiny_model), alias=tiny_model.name,
                           kind=kind)
        assert proof.ours is False and "other-model.gguf" in proof.why and tiny_model.name in proof.why, proof


def test_a_server_refusing_our_key_is_another_program(key_refusing_port, tiny_model):
    proof = model_proof_of(f"http://127.0.0.1:{key_refusing_port}", api_key="k", model=str(tiny_model),
                           alias=tiny_model.name, kind="llama-server")
    assert proof.ours is False and "HTTP 401" in proof.why, proof


def test_nothing_to_prove_with_is_unknown_not_ours(tiny_model):
    """No listener to ask and no answer: 'cannot tell' (the start proceeds and logs why), never 'ours'."""
    proof = prove_ours(None, 9, "http://127.0.0.1:9", api_key=None, model=str(tiny_model), alias=tiny_model.name,
                       kind="llama-server")
    assert proof.ours is None and "did not show which process" in proof.why, proof


_SHARED_PORT_SERVER = r"""
import http.server, socket, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b'{"status": "ok", "who": "ours"}'
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args): pass
class Server(http.server.HTTPServer):
    def server_bind(self):
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        super().server_bind()
server = Server(("0.0.0.0", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


@pytest.mark.skipif(not hasattr(socket, "SO_REUSEPORT"), reason="the takeover is played with SO_REUSEPORT (Linux)")
def test_a_second_listener_that_takes_the_ports_connections_is_another_program():
    """What Windows allows without any option (a second socket bound to 127.0.0.1 on a port our server holds on
    all addresses, the more specific bind getting the connections), played on Linux where both sockets set
    SO_REUSEPORT: our server still listens, yet another program answers; the socket proof says so."""
    ours = subprocess.Popen([sys.executable, "-c", _SHARED_PORT_SERVER], stdout=subprocess.PIPE, text=True)
    try:
        assert ours.stdout is not None
        port = int(ours.stdout.readline())
        base = f"http://127.0.0.1:{port}"
        assert prove_ours(ours.pid, port, base, api_key=None, model="/x/m.gguf", alias="m.gguf",
                          kind="llama-server").ours is None  # ours alone: listens, but names no model
        foreign = socket.socket()
        foreign.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        foreign.bind(("127.0.0.1", port))
        foreign.listen()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5):
                foreign.settimeout(5)
                taken, _ = foreign.accept()  # the connection went to the other program, not to ours
                taken.close()
            proof = prove_ours(ours.pid, port, base, api_key=None, model="/x/m.gguf", alias="m.gguf",
                               kind="llama-server")
            assert proof.ours is False, proof
            assert proof.why == f"process {os.getpid()} also listens on port {port} and takes its connections"
        finally:
            foreign.close()
    finally:
        ours.terminate()
        ours.wait(10)
        if ours.stdout is not None:
            ours.stdout.close()
