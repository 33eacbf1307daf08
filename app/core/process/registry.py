"""Pid files for running server children, so children left behind by a crashed app can be found.

Each file records the child's pid, create time and command line, and the app process that owns it.
A pid is only ever reported (or killed) when all three still match: a reused pid is never touched.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.atomic import write_json_atomic
from app.core.bounded_json import read_json
from app.core.paths import data_dir

logger = logging.getLogger(__name__)

CREATE_TIME_TOLERANCE_S = 0.1

if TYPE_CHECKING:  # psutil loads with the first use: the window's first paint does without it
    import psutil


@dataclass(frozen=True)
class StaleChild:
    pid: int
    create_time: float
    cmdline: tuple[str, ...]
    started_at: float
    record: Path

    def to_dict(self) -> dict:
        return {"pid": self.pid, "cmdline": list(self.cmdline), "started_at": self.started_at,
                "record": str(self.record)}


def registry_dir() -> Path:
    path = data_dir() / "children"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _own_create_time() -> float:
    import psutil

    return psutil.Process(os.getpid()).create_time()


def register(pid: int, create_time: float, cmdline: list[str]) -> Path:
    record = registry_dir() / f"{pid}.json"
    write_json_atomic(record, {
        "pid": pid, "create_time": create_time, "cmdline": list(cmdline), "started_at": time.time(),
        "owner_pid": os.getpid(), "owner_create_time": _own_create_time(),
    })
    return record


def unregister(record: Path) -> None:
    try:
        record.unlink()
    except OSError:  # gone already, or an unwritable data folder: the next clean-up pass tries again
        logger.debug("child record %s not removed", record, exc_info=True)


def _same_process(pid: int, create_time: float, cmdline: list[str] | None = None) -> bool:
    import psutil

    try:
        process = psutil.Process(pid)
        if abs(process.create_time() - create_time) > CREATE_TIME_TOLERANCE_S:
            return False
        if process.status() == psutil.STATUS_ZOMBIE:
            return False
        return cmdline is None or process.cmdline() == list(cmdline)
    except (psutil.Error, OSError):
        return False


def _load(record: Path) -> dict | None:
    try:
        data = read_json(record)
        int(data["pid"])  # each raises for a record that is not ours
        float(data["create_time"])
        list(data["cmdline"])
        return data
    except (OSError, ValueError, KeyError, TypeError):  # half-written or foreign: not a record of ours
        logger.debug("child record %s unreadable", record, exc_info=True)
        return None


def find_stale_children() -> list[StaleChild]:
    """Children whose app is gone but which still run. Records of dead children are cleaned up on the way."""
    stale = []
    for record in sorted(registry_dir().glob("*.json")):
        data = _load(record)
        if data is None:
            unregister(record)
            continue
        if _same_process(int(data.get("owner_pid", -1)), float(data.get("owner_create_time", -1))):
            continue  # its app (maybe another window of this app) still runs and owns it
        if not _same_process(int(data["pid"]), float(data["create_time"]), data["cmdline"]):
            unregister(record)
            continue
        stale.append(StaleChild(int(data["pid"]), float(data["create_time"]), tuple(data["cmdline"]),
                                float(data.get("started_at", 0.0)), record))
    return stale


def stop_own_children() -> int:
    """Stop children this very process registered and still runs. Normally none: a clean stop unregisters them.
    A Ctrl-C/SIGTERM landing between a spawn and the supervisor taking note of the child would otherwise leave it
    to the parent-death signal, with its pid file behind. Returns how many were stopped."""
    me, my_start = os.getpid(), _own_create_time()
    stopped = 0
    try:
        records = sorted(registry_dir().glob("*.json"))
    except OSError:  # a data folder that cannot be made: there is nothing registered to stop
        logger.warning("the children folder cannot be read; none stopped", exc_info=True)
        return 0
    for record in records:
        data = _load(record)
        if data is None or int(data.get("owner_pid", -1)) != me:
            continue
        if abs(float(data.get("owner_create_time", -1)) - my_start) > CREATE_TIME_TOLERANCE_S:
            continue
        child = StaleChild(int(data["pid"]), float(data["create_time"]), tuple(data["cmdline"]),
                           float(data.get("started_at", 0.0)), record)
        stopped += kill_stale_child(child, grace_s=1.0)
    return stopped


def kill_stale_child(child: StaleChild, *, grace_s: float = 3.0) -> bool:
    """Stop a stale child (polite first, then kill). False when it is no longer the same process."""
    import psutil

    if not _same_process(child.pid, child.create_time, list(child.cmdline)):
        unregister(child.record)
        return False
    try:
        process = psutil.Process(child.pid)
    except psutil.NoSuchProcess:  # it died on its own since the check above
        process = None
    if process is not None:
        _signal_tree(process, polite=True)
        if not _wait_gone(child, grace_s):
            _signal_tree(process, polite=False)
            _wait_gone(child, 3.0)
    unregister(child.record)
    return not _same_process(child.pid, child.create_time)


def _wait_gone(child: StaleChild, timeout: float) -> bool:
    """Polls instead of Process.wait(): a zombie (dead, not yet reaped by its parent) counts as gone."""
    deadline = time.monotonic() + timeout
    while _same_process(child.pid, child.create_time):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _signal_tree(process: psutil.Process, *, polite: bool) -> None:
    import psutil

    try:
        targets = process.children(recursive=True) + [process]
    except psutil.Error:
        targets = [process]
    for target in targets:
        try:
            if polite and os.name != "nt":
                target.send_signal(signal.SIGTERM)
            elif polite:
                target.terminate()
            else:
                target.kill()
        except psutil.Error:  # it exited meanwhile, or is not ours to signal
            logger.debug("could not signal pid %s", target.pid, exc_info=True)
