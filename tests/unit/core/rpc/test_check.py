"""Checking workers against a real rpc-server (the test llama-server's, built with RPC) on 127.0.0.1."""

from __future__ import annotations

import socket
import time

import psutil
import pytest

from app.core.rpc import protocol
from app.core.rpc.check import BUSY, READY, REFUSED, UNREACHABLE, check_worker, check_workers
from app.core.rpc.worker import Worker
from app.core.server.shared_worker import SharedWorker, share_warning

pytestmark = pytest.mark.slow  # starts a real rpc-server (a few seconds on a busy machine)


def closed_port() -> int:
    """A loopback port nothing listens on (bound a moment, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def shared(llama_server_bin):
    worker = SharedWorker(port=closed_port(), server_bin=llama_server_bin)
    worker.start()
    worker.wait_ready()
    yield worker
    worker.stop()


def test_a_real_worker_answers_hello_with_its_version_and_memory(shared):
    check = check_worker(shared.worker)
    assert check.state == READY and check.version == protocol.PROTOCOL_VERSION
    # a CPU worker reports the computer's physical RAM as free and total (ggml-cpu's rule)
    assert check.total_bytes == psutil.virtual_memory().total and check.free_bytes == check.total_bytes
    assert "is ready" in check.sentence().render("en") and check.to_dict()["usable"]


def test_a_worker_serving_someone_else_is_busy_not_gone(shared):
    with socket.create_connection((shared.worker.host, shared.worker.port)) as held:
        held.settimeout(5)
        assert protocol.hello(held) == protocol.PROTOCOL_VERSION  # this connection now owns the worker
        busy = check_worker(shared.worker, timeout_s=0.5)
    assert busy.state == BUSY and "serving another model" in busy.sentence().render("en")
    # free again once the first one hung up: the queued HELLO is answered (and closed cleanly) first
    deadline = time.monotonic() + 5
    while check_worker(shared.worker).state != READY and time.monotonic() < deadline:
        time.sleep(0.05)
    assert check_worker(shared.worker).state == READY and shared.running  # nobody hung up on it mid-answer


def test_nothing_listening_and_no_such_computer():
    refused, unreachable = check_workers([Worker("127.0.0.1", closed_port()), Worker("no-such-host.invalid", 1)],
                                         timeout_s=0.5)
    assert refused.state == REFUSED and unreachable.state == UNREACHABLE and not refused.usable


def test_the_shared_worker_is_supervised_and_warns_beyond_loopback(shared):
    assert shared.running and shared.child.pid and shared.log.path.name.startswith("worker-")
    assert any("Starting RPC server" in line for line in shared.log.texts())
    assert "anyone who can reach" in share_warning("192.168.1.20", 50052).render("en")
    assert "Only programs on this computer" in shared.warning.render("en")
