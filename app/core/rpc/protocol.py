"""The three RPC commands the app sends to a worker itself, over a plain TCP socket.

Wire format, confirmed in llama.cpp's ggml/src/ggml-rpc/ggml-rpc.cpp and transport.h (protocol 7.0.0, the b11434
sources this app builds), little-endian, structs packed:

- request:  | command (u8) | request size (u64) | request bytes |
- response: | response size (u64) | response bytes |  (the size must equal the struct's, or the client gives up)
- the first command on a connection must be RPC_CMD_HELLO (14, fixed forever by a static_assert); the request is
  ``conn_caps[24]`` (all zero: plain TCP, no RDMA upgrade), the answer ``major, minor, patch, padding (u8 each),
  conn_caps[24]``. A server that gets a HELLO of another size logs "HELLO request size mismatch" and closes the
  connection: that is how a worker older than protocol 7 (empty HELLO, 3-byte answer) reacts, and how a newer
  one would. llama.cpp's client accepts a server when ``major`` is equal and ``minor`` not higher than its own.
- RPC_CMD_DEVICE_COUNT (15): empty request; answer ``u32 device_count``.
- RPC_CMD_GET_DEVICE_MEMORY (11): ``u32 device``; answer ``u64 free, u64 total``. A CPU worker reports the
  computer's physical RAM as both (ggml-cpu: "free system memory is ill-defined ... assume all of it is free").

An rpc-server serves ONE connection at a time (accept, serve until it closes, accept the next): while a model
server uses the worker, a second connection is accepted by the kernel but not answered. Such a worker is busy.
Its HELLO then waits in the worker's queue; hanging up would make the worker answer a closed socket later, and
rpc-server does not ignore SIGPIPE (seen here: the worker died when the first client left). So a busy check's
connection is kept by a background thread until the answer comes, read, and closed after it; a worker with such
a connection pending is reported busy without asking again.
"""

from __future__ import annotations

import logging
import socket
import struct
import threading
from dataclasses import dataclass

from app.core.rpc.worker import Worker

CMD_GET_DEVICE_MEMORY = 11
CMD_HELLO = 14
CMD_DEVICE_COUNT = 15
CONN_CAPS_SIZE = 24
logger = logging.getLogger(__name__)
PROTOCOL_VERSION = (7, 0, 0)  # RPC_PROTO_{MAJOR,MINOR,PATCH}_VERSION of the llama.cpp this app builds
_HELLO_ANSWER = struct.Struct(f"<BBBB{CONN_CAPS_SIZE}s")
_SIZE = struct.Struct("<Q")
_MEMORY = struct.Struct("<QQ")
_COUNT = struct.Struct("<I")


class RpcError(Exception):
    """Why a worker gave no usable answer; ``kind`` is one of the WorkerState values in app.core.rpc.check."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.detail = detail


@dataclass(frozen=True)
class DeviceMemory:
    free_bytes: int
    total_bytes: int


@dataclass(frozen=True)
class WorkerAnswer:
    version: tuple[int, int, int]
    devices: tuple[DeviceMemory, ...]


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise RpcError("closed", f"connection closed after {len(data)} of {size} bytes")
        data += chunk
    return bytes(data)


def call(sock: socket.socket, command: int, request: bytes, answer_size: int) -> bytes:
    """One command and its fixed-size answer."""
    sock.sendall(bytes([command]) + _SIZE.pack(len(request)) + request)
    (size,) = _SIZE.unpack(_recv_exact(sock, _SIZE.size))
    if size != answer_size:
        raise RpcError("bad_answer", f"command {command}: answer of {size} bytes, expected {answer_size}")
    return _recv_exact(sock, answer_size)


def hello(sock: socket.socket) -> tuple[int, int, int]:
    major, minor, patch, _pad, _caps = _HELLO_ANSWER.unpack(
        call(sock, CMD_HELLO, bytes(CONN_CAPS_SIZE), _HELLO_ANSWER.size))
    return major, minor, patch


def device_count(sock: socket.socket) -> int:
    return _COUNT.unpack(call(sock, CMD_DEVICE_COUNT, b"", _COUNT.size))[0]


def device_memory(sock: socket.socket, device: int) -> DeviceMemory:
    free, total = _MEMORY.unpack(call(sock, CMD_GET_DEVICE_MEMORY, _COUNT.pack(device), _MEMORY.size))
    return DeviceMemory(int(free), int(total))


def compatible(version: tuple[int, int, int], ours: tuple[int, int, int] = PROTOCOL_VERSION) -> bool:
    """llama.cpp's own rule (negotiate_hello): the same major version, a minor version not above ours."""
    return version[0] == ours[0] and version[1] <= ours[1]


_pending: set[Worker] = set()  # workers whose queued HELLO a background thread still waits on
_pending_lock = threading.Lock()
PENDING_WAIT_S = 24 * 3600.0


def _answer_later(worker: Worker, sock: socket.socket) -> None:
    """Keep a queued HELLO's connection until the worker answers it, then hang up cleanly."""
    def wait() -> None:
        try:
            sock.settimeout(PENDING_WAIT_S)
            _recv_exact(sock, _SIZE.size + _HELLO_ANSWER.size)
        except (OSError, RpcError):
            logger.debug("queued HELLO to %s ended without an answer", worker.address, exc_info=True)
        finally:
            sock.close()
            with _pending_lock:
                _pending.discard(worker)

    with _pending_lock:
        _pending.add(worker)
    threading.Thread(target=wait, name=f"rpc-hello-{worker.address}", daemon=True).start()


def ask(worker: Worker, *, timeout_s: float = 2.0) -> WorkerAnswer:
    """Connect, HELLO, and the memory of every device. Raises RpcError: refused (nothing listens there),
    unreachable (no route, no such host, no answer to the connection), busy (connected but not answered: it
    serves another model server), closed (it hung up: another protocol version), bad_answer."""
    with _pending_lock:
        if worker in _pending:
            raise RpcError("busy", "an earlier HELLO is still queued there")
    try:
        sock = socket.create_connection((worker.host, worker.port), timeout=timeout_s)
    except ConnectionRefusedError as error:
        raise RpcError("refused", str(error)) from error
    except (TimeoutError, OSError) as error:  # gaierror, no route, timeout: the computer is not reachable
        raise RpcError("unreachable", str(error)) from error
    try:
        version = hello(sock)
    except TimeoutError as error:
        _answer_later(worker, sock)  # owns the socket now
        raise RpcError("busy", "connected, no answer to HELLO") from error
    except (OSError, RpcError) as error:
        sock.close()
        if isinstance(error, RpcError):
            raise
        raise RpcError("closed", str(error)) from error
    with sock:
        if not compatible(version):  # its other commands may differ: ask nothing more
            return WorkerAnswer(version, ())
        try:
            count = device_count(sock)
            return WorkerAnswer(version, tuple(device_memory(sock, i) for i in range(min(count, 16))))
        except (OSError, struct.error) as error:
            raise RpcError("bad_answer", str(error)) from error
