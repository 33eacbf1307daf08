"""What ``llama-server --list-devices`` says: the graphics devices a build can use, and whether one is this card.

llama.cpp's ``common_print_available_devices`` (common/arg.cpp) prints, on stdout::

    Available devices:
      CUDA0: NVIDIA GeForce RTX 3080 Ti (11909 MiB, 11650 MiB free)

one line per non-CPU device (``"  %s: %s (%zu MiB, %zu MiB free)"``: the backend's device name, its description,
total and free memory), or ``  (none)`` when there is none. Recorded outputs with their sources are in
tests/data/list_devices/. CUDA and Vulkan describe an NVIDIA card by the name NVML gives it ("NVIDIA GeForce RTX
3080 Ti"), so the card is recognised by that name.
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

logger = logging.getLogger(__name__)

LIST_TIMEOUT_S = 60.0  # a CUDA build initialises the card (and may compile kernels) before it answers
MAX_OUTPUT_BYTES = 1 << 20  # per stream: a device list is a few hundred bytes, the log before it a few kB
POLL_S = 0.1  # how often a run looks at its deadline, its output and a stop while waiting
READER_JOIN_S = 2.0
HEADER = "Available devices:"
_DEVICE = re.compile(r"^\s+(?P<name>\S+): (?P<description>.*?) \((?P<total>\d+) MiB, (?P<free>\d+) MiB free\)\s*$")


@dataclass(frozen=True)
class ListedDevice:
    name: str  # "CUDA0", "Vulkan0"
    description: str  # "NVIDIA GeForce RTX 3080 Ti"
    total_mib: int
    free_mib: int

    @property
    def line(self) -> str:
        return f"{self.name}: {self.description} ({self.total_mib} MiB, {self.free_mib} MiB free)"


@dataclass(frozen=True)
class DeviceListing:
    """One run of ``--list-devices``: the devices (None when the output has no device list at all), the exit
    code (None: it did not finish) and the output's last lines as evidence; ``ended``: why it was killed."""

    devices: tuple[ListedDevice, ...] | None
    returncode: int | None
    tail: tuple[str, ...]
    ended: str | None = None  # killed: "timeout" (no answer in time), "output" (too much output) or "stopped"


def parse_device_list(text: str) -> tuple[ListedDevice, ...] | None:
    """The devices listed after "Available devices:"; None when that line is missing (not such an answer)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == HEADER), None)
    if start is None:
        return None
    devices = []
    for line in lines[start + 1:]:
        match = _DEVICE.match(line)
        if match:
            devices.append(ListedDevice(match["name"], match["description"].strip(), int(match["total"]),
                                        int(match["free"])))
        elif line.strip() and not line.startswith(" "):
            break  # the list ended (a log line after it)
    return tuple(devices)


def _normal(name: str) -> str:
    return " ".join(name.casefold().split())


def card_device(devices: tuple[ListedDevice, ...], card_name: str, backend: str) -> ListedDevice | None:
    """The listed device of ``backend`` ("CUDA", "Vulkan") that is the card named ``card_name`` (NVML's name)."""
    wanted = _normal(card_name)
    for device in devices:
        if not device.name.casefold().startswith(backend.casefold()):
            continue
        description = _normal(device.description)
        if description == wanted or (wanted and (wanted in description or description in wanted)):
            return device
    return None


def list_devices(launcher: Path, timeout_s: float | None = None, *,
                 should_stop: Callable[[], bool] = lambda: False) -> DeviceListing:
    """Run ``launcher --list-devices`` (``llama serve --list-devices`` for the single program): at most
    ``timeout_s``, MAX_OUTPUT_BYTES of each stream kept (more ends it: no device list is that long), and whatever it
    started in its process group killed when it ends (a build that hangs or leaves a helper running leaves nothing).
    ``timeout_s`` None: LIST_TIMEOUT_S."""
    from app.core.launch.discovery import server_argv_prefix

    timeout_s = LIST_TIMEOUT_S if timeout_s is None else timeout_s
    try:
        run = _run_bounded([*server_argv_prefix(launcher), "--list-devices"], timeout_s, should_stop)
    except OSError as error:
        logger.info("%s --list-devices could not run: %s", launcher, error)
        return DeviceListing(None, None, (f"{launcher}: {error}",))
    stdout = bytes(run.stdout).decode("utf-8", errors="replace")
    stderr = bytes(run.stderr).decode("utf-8", errors="replace")
    tail = tuple(_printable(line[:300]) for line in (stderr[-8000:] + "\n" + stdout[-8000:]).strip().splitlines()[-20:])
    if run.ended is not None:
        note = {"timeout": f"{launcher} --list-devices did not answer within {timeout_s:.0f} s",
                "output": f"{launcher} --list-devices wrote more than {MAX_OUTPUT_BYTES} bytes; it was stopped",
                "stopped": f"{launcher} --list-devices was stopped"}[run.ended]
        return DeviceListing(None, None, (*tail[-19:], note), run.ended)
    return DeviceListing(parse_device_list(stdout), run.returncode, tail)


def _printable(line: str) -> str:
    """A line of the program's output fit for evidence: control characters (a terminal escape, NULs) escaped."""
    return "".join(char if char.isprintable() else ascii(char)[1:-1] for char in line)


@dataclass
class _Run:
    returncode: int | None = None
    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    ended: str | None = None  # "timeout", "output" or "stopped" when it was killed


def _run_bounded(argv: list[str], timeout_s: float, should_stop: Callable[[], bool]) -> _Run:
    popen, job = _start(argv)
    run, too_much = _Run(), threading.Event()
    readers = [threading.Thread(target=_drain, args=(pipe, kept, too_much), daemon=True)
               for pipe, kept in ((popen.stdout, run.stdout), (popen.stderr, run.stderr))]
    for reader in readers:
        reader.start()
    deadline = time.monotonic() + timeout_s
    try:
        while run.ended is None:
            try:
                run.returncode = popen.wait(timeout=POLL_S)
                break
            except subprocess.TimeoutExpired:
                run.ended = ("output" if too_much.is_set() else "stopped" if should_stop()
                             else "timeout" if time.monotonic() > deadline else None)
    finally:
        _kill_group(popen, job)
    for reader in readers:
        reader.join(READER_JOIN_S)
    if run.ended is None and too_much.is_set():  # it wrote too much and ended before a look saw it
        run.ended = "output"
    if run.ended is not None:
        run.returncode = None
    return run


def _start(argv: list[str]) -> tuple[subprocess.Popen, object | None]:
    kwargs: dict = dict(stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    if sys.platform == "win32":
        popen = subprocess.Popen(argv, creationflags=subprocess.CREATE_NEW_PROCESS_GROUP | subprocess.CREATE_NO_WINDOW,
                                 **kwargs)
        from app.core.process.windows import put_in_kill_on_close_job

        try:
            return popen, put_in_kill_on_close_job(popen)
        except OSError:
            logger.warning("pid %s could not be put in a job; only it is killed at the end", popen.pid, exc_info=True)
            return popen, None
    return subprocess.Popen(argv, start_new_session=True, **kwargs), None


def _drain(pipe, kept: bytearray, too_much: threading.Event) -> None:
    """Read ``pipe`` to its end, keeping its first MAX_OUTPUT_BYTES (the rest is read and dropped)."""
    fd = pipe.fileno()
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        room = MAX_OUTPUT_BYTES - len(kept)
        if len(chunk) > room:
            too_much.set()
        kept += chunk[:max(0, room)]
    pipe.close()


def _kill_group(popen: subprocess.Popen, job: object | None) -> None:
    """Kill the child and everything in its process group (Windows: its job, which holds what it started)."""
    if sys.platform == "win32":
        close = getattr(job, "close", None)
        if close is not None:
            close()  # a kill-on-close job: every process in it ends
        elif popen.poll() is None:
            popen.kill()
    else:
        try:
            os.killpg(popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # it and its group are gone
        except OSError:
            logger.warning("the group of pid %s could not be killed", popen.pid, exc_info=True)
    try:
        popen.wait(timeout=5.0)
    except subprocess.TimeoutExpired:
        logger.warning("pid %s did not end after it was killed", popen.pid)
