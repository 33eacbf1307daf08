"""Our memory cgroup (v1 or v2, where the OS has one): the one reader of its limit, usage and OOM-kill counter.

The hardware scan (the plan's RAM budget), the probe's free-memory check and the diagnosis all read here,
so the plan and the crash sentence name the same limit. The limit that applies is the tightest one on the
chain from our cgroup up to the mount root: in a nested container (or a systemd slice inside one) a parent's
limit can be smaller than our own.

Every reader takes its inputs (the text of /proc/self/cgroup, a root directory) as arguments so tests can
feed recorded trees; called without them, they read the live system and never raise.
"""

from __future__ import annotations

import logging
import platform
from dataclasses import dataclass
from pathlib import Path

from app.core.hardware.system import read_text

logger = logging.getLogger(__name__)

SELF_CGROUP_PATH = "/proc/self/cgroup"
CGROUP_ROOT = "/sys/fs/cgroup"
# cgroup v1 writes "no limit" as a huge page-aligned number (2^63 rounded down to a page), v2 as "max".
_UNLIMITED_THRESHOLD = 1 << 60


@dataclass(frozen=True)
class CgroupMemory:
    """The tightest memory limit on this process's cgroup chain and the usage counted against it.

    ``reclaimable_bytes`` is the inactive page cache inside ``usage_bytes``: the kernel drops it
    before the OOM killer acts, so headroom = limit - (usage - reclaimable) (as `docker stats` does).
    """

    version: int
    limit_bytes: int | None
    usage_bytes: int | None
    reclaimable_bytes: int = 0

    def headroom_bytes(self) -> int | None:
        if self.limit_bytes is None:
            return None
        used = max(0, (self.usage_bytes or 0) - self.reclaimable_bytes)
        return max(0, self.limit_bytes - used)


@dataclass(frozen=True)
class MemoryCgroup:
    """Where our memory cgroup lives: its version and the directories from it up to the mount root, deepest first."""

    version: int
    dirs: tuple[Path, ...]

    @property
    def events_path(self) -> Path | None:
        """memory.events (v2) or memory.oom_control (v1) of the deepest cgroup that has one: both count ``oom_kill``
        (the kernel counts a kill in the victim's cgroup and, in v2, in every ancestor)."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        for directory in self.dirs:
            if (directory / name).exists():
                return directory / name
        return None


def parse_limit(text: str | None) -> int | None:
    """A cgroup limit file's value in bytes; None for 'max', the v1 'unlimited' number, or junk."""
    value = (text or "").strip()
    if not value or value == "max":
        return None
    try:
        number = int(value)
    except ValueError:
        return None
    return None if number <= 0 or number >= _UNLIMITED_THRESHOLD else number


def _parse_int(text: str | None) -> int | None:
    try:
        return int((text or "").strip())
    except ValueError:
        return None


def _stat_value(stat_text: str | None, key: str) -> int:
    for line in (stat_text or "").splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            return _parse_int(value) or 0
    return 0


def cgroup_path(proc_self_cgroup: str | None, controller: str | None) -> str | None:
    """This process's cgroup path: the v2 '0::/path' line (controller None) or the v1 line naming it."""
    for line in (proc_self_cgroup or "").splitlines():
        parts = line.strip().split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controller is None and parts[0] == "0" and controllers == "":
            return path
        if controller is not None and controller in controllers.split(","):
            return path
    return None


def _chain(mount: Path, path: str) -> list[Path]:
    """Directories from this cgroup up to the mount root, deepest first.

    Inside a cgroup namespace the path may not exist under the mount (the mount already is our
    cgroup), so only existing directories are kept and the mount root is always included.
    """
    current = mount / path.strip("/") if path.strip("/") else mount
    dirs = []
    while True:
        if current.is_dir():
            dirs.append(current)
        if current == mount or mount not in current.parents:
            break
        current = current.parent
    if mount not in dirs and mount.is_dir():
        dirs.append(mount)
    return dirs


def find_memory_cgroup(proc_self_cgroup: str | None, root: str | Path = CGROUP_ROOT) -> MemoryCgroup | None:
    """Our memory cgroup chain: the v1 memory controller where one is mounted, else the v2 tree
    (at the root, or under ``unified/`` on a hybrid system). None where there is no memory cgroup."""
    root = Path(root)
    v1_path = cgroup_path(proc_self_cgroup, "memory")
    if v1_path is not None and (root / "memory").is_dir():
        dirs = _chain(root / "memory", v1_path)
        if dirs:
            return MemoryCgroup(1, tuple(dirs))
    v2_path = cgroup_path(proc_self_cgroup, None)
    if v2_path is None:
        return None
    for mount in (root, root / "unified"):
        dirs = _chain(mount, v2_path)
        if dirs and ((mount / "cgroup.controllers").exists() or any((d / "memory.events").exists() for d in dirs)):
            return MemoryCgroup(2, tuple(dirs))
    return None


def read_cgroup_memory_at(proc_self_cgroup: str | None, root: str | Path = CGROUP_ROOT) -> CgroupMemory | None:
    """Limit and usage from a cgroup v2 tree (memory.max) or a v1 memory controller (memory.limit_in_bytes)."""
    found = find_memory_cgroup(proc_self_cgroup, root)
    if found is None:
        return None
    limit_name, usage_name, inactive_key = (
        ("memory.max", "memory.current", "inactive_file")
        if found.version == 2
        else ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file")
    )
    best: tuple[int, Path] | None = None
    for directory in found.dirs:
        limit = parse_limit(read_text(directory / limit_name))
        if limit is not None and (best is None or limit < best[0]):
            best = (limit, directory)
    where = best[1] if best else found.dirs[0]
    usage = _parse_int(read_text(where / usage_name))
    reclaimable = _stat_value(read_text(where / "memory.stat"), inactive_key)
    return CgroupMemory(found.version, best[0] if best else None, usage, reclaimable)


def read_cgroup_memory(self_cgroup: str | None = None, root: str | Path | None = None) -> CgroupMemory | None:
    """This process's cgroup memory (live system by default); None off Linux or without a memory cgroup."""
    if self_cgroup is None and platform.system() != "Linux":
        return None
    try:
        return read_cgroup_memory_at(read_text(self_cgroup or SELF_CGROUP_PATH), root or CGROUP_ROOT)
    except OSError:
        logger.debug("cgroup memory unreadable", exc_info=True)
        return None


def own_memory_cgroup(self_cgroup: str | None = None, root: str | Path | None = None) -> tuple[Path, int] | None:
    """Our memory cgroup directory (the deepest one that exists) and its version (1 or 2); children inherit it."""
    found = find_memory_cgroup(read_text(self_cgroup or SELF_CGROUP_PATH), root or CGROUP_ROOT)
    return (found.dirs[0], found.version) if found is not None else None


def own_cgroup_events_path(self_cgroup: str | None = None, root: str | Path | None = None) -> str | None:
    """memory.events (cgroup v2) or memory.oom_control (v1) of our cgroup: both count ``oom_kill``."""
    try:
        found = find_memory_cgroup(read_text(self_cgroup or SELF_CGROUP_PATH), root or CGROUP_ROOT)
    except OSError:
        logger.debug("cgroup events file not found", exc_info=True)
        return None
    events = found.events_path if found is not None else None
    return str(events) if events is not None else None


def memory_limit_bytes(self_cgroup: str | None = None, root: str | Path | None = None) -> int | None:
    """The smaller of the tightest cgroup memory limit on our chain (if any) and total RAM."""
    limits: list[int] = []
    cgroup = read_cgroup_memory(self_cgroup, root)
    if cgroup is not None and cgroup.limit_bytes is not None:
        limits.append(cgroup.limit_bytes)
    try:
        import psutil

        limits.append(int(psutil.virtual_memory().total))
    except Exception:  # psutil is a dependency, but a broken /proc must not break a diagnosis
        logger.warning("total RAM unreadable; the diagnosis goes on without it", exc_info=True)
    return min(limits) if limits else None
