"""One server child process: spawn it so it can never outlive the app, read its output, stop it.

No orphan ever: on Linux the child gets a parent-death signal (SIGKILL); on Windows it is put in a Job
Object that kills it when the app's handle closes. The child runs in its own process group / session so a
stop reaches everything it started.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

import psutil

from app.core.process import registry as child_registry
from app.core.process.registry import StaleChild, find_stale_children, kill_stale_child  # noqa: F401  (re-exported)

logger = logging.getLogger(__name__)
MAX_PENDING_BYTES = 64 << 10  # a line longer than this reaches the reader in pieces

RSS_SAMPLE_INTERVAL_S = 0.5
READER_JOIN_TIMEOUT_S = 0.3
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")

LineCallback = Callable[[str, str], object]  # (stream, text); what it returns is not used
ExitCallback = Callable[["ChildProcess", int], None]
MemorySampler = Callable[[psutil.Process], Any]  # one reading of a live child; None: nothing to record this time
_T = TypeVar("_T")


def rss_sample(process: psutil.Process) -> tuple[float, int]:
    """The plain reading: (time.time(), resident bytes)."""
    return time.time(), process.memory_info().rss


def split_lines(buffer: bytes) -> tuple[list[bytes], bytes]:
    """Complete lines in ``buffer`` (ended by \\n, \\r\\n or a bare \\r progress update) and the unfinished rest."""
    hold_cr = buffer.endswith(b"\r")  # may be the first half of \r\n: wait for the next chunk
    body = buffer[:-1] if hold_cr else buffer
    parts = _LINE_BREAK.split(body)
    rest = parts.pop() + (b"\r" if hold_cr else b"")
    return parts, rest


def _last_char_start(data: bytes) -> int:
    """Where the last UTF-8 character of ``data`` starts, so a piece cut there never splits a character."""
    start = len(data) - 1
    while start > 0 and len(data) - start < 4 and data[start] & 0xC0 == 0x80:
        start -= 1
    return max(start, 1)


class _Spawner:
    """Starts every child from one long-lived thread.

    Linux delivers PR_SET_PDEATHSIG when the *thread* that forked the child exits, not the process;
    a restart from a short-lived worker thread would otherwise kill its own new child moments later.
    """

    def __init__(self) -> None:
        self._jobs: list[tuple[Callable[[], Any], Future[Any]]] = []
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def run(self, func: Callable[[], _T]) -> _T:
        future: Future[_T] = Future()
        with self._cond:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="child-spawner", daemon=True)
                self._thread.start()
            self._jobs.append((func, future))
            self._cond.notify()
        return future.result()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._jobs:
                    self._cond.wait()
                func, future = self._jobs.pop(0)
            try:
                future.set_result(func())
            except BaseException as error:  # noqa: BLE001 - handed to the caller's thread
                future.set_exception(error)


_spawner = _Spawner()


def _posix_preexec(parent_pid: int, rlimits: dict[int, tuple[int, int] | int] | None) -> Callable[[], None]:
    """Runs in the child between fork and exec: only pre-resolved objects, no imports, no locks."""
    if sys.platform == "win32":
        raise NotImplementedError("POSIX only: a Windows child goes into a kill-on-close Job Object instead")
    prctl = None
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    import resource

    limits = [(res, value if isinstance(value, tuple) else (value, value)) for res, value in (rlimits or {}).items()]
    pr_set_pdeathsig, sigkill = 1, int(signal.SIGKILL)

    def preexec() -> None:
        if prctl is not None:
            prctl(pr_set_pdeathsig, sigkill, 0, 0, 0)
            if os.getppid() != parent_pid:  # the app died before prctl took effect
                os.kill(os.getpid(), sigkill)
        for res, pair in limits:
            resource.setrlimit(res, pair)

    return preexec


def pinned_gpu_order(env: dict[str, str] | None) -> dict[str, str]:
    """``env`` (None: this process's) with CUDA's device order pinned to the PCI bus order.

    CUDA numbers GPUs fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID; NVML, which the Machine step and the
    memory plan read, numbers them by PCI bus. Pinned, GPU n of a launch (``--main-gpu n``, the n-th share of
    ``--tensor-split``) is the card shown as GPU n, on any mix of cards and with every start the same (a
    CUDA_VISIBLE_DEVICES the user set still hides or reorders cards: app.core.hardware.device_order follows it).
    """
    return {**(os.environ if env is None else env), "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}


def child_environment(env: dict[str, str] | None) -> dict[str, str]:
    """What every server child runs with: CUDA's device order pinned, and an ASCII temporary folder where the user's
    is not ASCII (app/core/process/temp_dir.py)."""
    from app.core.process.temp_dir import with_ascii_temp

    return with_ascii_temp(pinned_gpu_order(env))


class ChildProcess:
    """A started child. Output lines go to ``on_line``; ``on_exit`` fires once, from a waiter thread, as soon as
    the child is gone (it blocks in wait(), so there is no polling delay)."""

    def __init__(self, argv: list[str], *, on_line: LineCallback, on_exit: ExitCallback,
                 env: dict[str, str] | None = None, cwd: str | None = None,
                 rlimits: dict[int, tuple[int, int] | int] | None = None, register: bool = True,
                 ignore_sigpipe: bool = False, sample_memory: MemorySampler = rss_sample):
        self.argv = list(argv)
        # POSIX: a child that writes to a socket whose peer went away dies of SIGPIPE unless it ignores it; the
        # app's Python ignores it, and keeping that (no restore_signals) lets such a child see EPIPE instead
        self._restore_signals = not ignore_sigpipe
        self._on_line = on_line
        self._on_exit = on_exit
        self._exited = threading.Event()
        self._stop_requested = False
        self.returncode: int | None = None
        # every RSS_SAMPLE_INTERVAL_S while it runs: ``sample_memory``'s readings (the supervisor's carry the memory
        # still available too, the evidence a kill's diagnosis needs)
        self.rss_samples: deque[Any] = deque(maxlen=240)
        self._sample_memory = sample_memory
        self._job = None
        self.popen = _spawner.run(lambda: self._popen(env, cwd, rlimits))
        self.pid: int = self.popen.pid
        self.started_at = time.time()
        self.create_time = _create_time(self.pid)
        self._registry_file = self._register() if register else None
        self._readers = [self._start_reader(self.popen.stdout, "stdout"),
                         self._start_reader(self.popen.stderr, "stderr")]
        threading.Thread(target=self._sample_rss, name=f"rss-{self.pid}", daemon=True).start()
        threading.Thread(target=self._wait, name=f"waiter-{self.pid}", daemon=True).start()

    # -- start -------------------------------------------------------------------------------------------------
    def _popen(self, env, cwd, rlimits) -> subprocess.Popen:
        kwargs: dict = dict(stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            bufsize=0, close_fds=True, env=child_environment(env), cwd=cwd)
        if sys.platform == "win32":
            kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP | subprocess.CREATE_NO_WINDOW
            popen = subprocess.Popen(self.argv, **kwargs)
            from app.core.process import windows as child_windows

            self._job = child_windows.put_in_kill_on_close_job(popen, rlimits)
            return popen
        kwargs["start_new_session"] = True
        kwargs["restore_signals"] = self._restore_signals
        kwargs["preexec_fn"] = _posix_preexec(os.getpid(), rlimits)
        return subprocess.Popen(self.argv, **kwargs)

    def _register(self):
        """Best effort: an unwritable data dir must not raise here, with the child already running untracked."""
        try:
            return child_registry.register(self.pid, self.create_time, self.argv)
        except OSError:
            logger.warning("pid %s runs without a child record (data folder not writable)", self.pid, exc_info=True)
            return None

    def _start_reader(self, pipe, stream: str) -> threading.Thread:
        thread = threading.Thread(target=self._read, args=(pipe, stream), name=f"{stream}-{self.pid}", daemon=True)
        thread.start()
        return thread

    def _read(self, pipe, stream: str) -> None:
        fd, pending = pipe.fileno(), b""
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            lines, pending = split_lines(pending + chunk)
            if len(pending) > MAX_PENDING_BYTES:  # output without a line break is passed on in pieces, never held whole
                cut = _last_char_start(pending)
                lines.append(pending[:cut])
                pending = pending[cut:]
            self._emit(stream, lines)
        self._emit(stream, [pending.rstrip(b"\r")])
        pipe.close()

    def _emit(self, stream: str, lines: list[bytes]) -> None:
        for raw in lines:
            text = raw.decode("utf-8", errors="replace").rstrip()
            if text:
                self._on_line(stream, text)

    def _sample_rss(self) -> None:
        try:
            process = psutil.Process(self.pid)
            while not self._exited.is_set():
                sample = self._sample_memory(process)
                if sample is not None:
                    self.rss_samples.append(sample)
                self._exited.wait(RSS_SAMPLE_INTERVAL_S)
        except (psutil.Error, OSError):  # the child is gone (or hidden from us): the samples so far stand
            logger.debug("RSS sampling of pid %s ended", self.pid, exc_info=True)
            return

    def _wait(self) -> None:
        returncode = self.popen.wait()
        deadline = time.monotonic() + READER_JOIN_TIMEOUT_S
        for reader in self._readers:  # the last stderr lines explain the death: let them arrive first
            reader.join(max(0.0, deadline - time.monotonic()))
        self.returncode = returncode
        if self._registry_file is not None:
            child_registry.unregister(self._registry_file)
        self._exited.set()
        self._on_exit(self, returncode)

    # -- state and stop ----------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return not self._exited.is_set()

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    def wait(self, timeout: float | None = None) -> int | None:
        self._exited.wait(timeout)
        return self.returncode

    def stop(self, grace_s: float = 5.0) -> int | None:
        """Polite signal to the whole group, wait ``grace_s``, then kill. Returns the exit status."""
        self._stop_requested = True
        if self.running:
            polite_sent = self._signal(polite=True)
            if not polite_sent or not self._exited.wait(grace_s):
                self._signal(polite=False)
                self._exited.wait(5.0)
        self._kill_leftovers()
        return self.returncode

    def kill(self) -> None:
        """Immediate kill without marking the exit as requested (tests and benchmarks simulate crashes so)."""
        self._signal(polite=False)

    def _signal(self, *, polite: bool) -> bool:
        """Signal the child's group. False when the signal could not be sent (then a kill is the only way)."""
        if self.popen.returncode is not None:
            return True
        try:
            if sys.platform == "win32":
                # CTRL_BREAK reaches the child's group only when both share a console; a windowed app has none.
                self.popen.send_signal(signal.CTRL_BREAK_EVENT) if polite else self.popen.kill()
            else:
                os.killpg(self.pid, signal.SIGTERM if polite else signal.SIGKILL)
        except ProcessLookupError:
            return True
        except OSError:
            logger.warning("could not signal the group of pid %s", self.pid, exc_info=True)
            return False
        return True

    def _kill_leftovers(self) -> None:
        """Anything the child started in its group dies with it (the group id is the child's pid)."""
        if sys.platform == "win32":
            return
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # the usual case: nothing was left in the group
        except OSError:
            logger.warning("leftovers in the group of pid %s could not be killed", self.pid, exc_info=True)


def _create_time(pid: int) -> float:
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return time.time()
