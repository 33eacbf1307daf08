"""Our memory cgroup (v1 or v2, where the OS has one): its OOM-kill counter file and its memory limit."""

from __future__ import annotations

from pathlib import Path

SELF_CGROUP_PATH = "/proc/self/cgroup"
CGROUP_ROOT = "/sys/fs/cgroup"


def own_memory_cgroup(self_cgroup: str = SELF_CGROUP_PATH, root: str = CGROUP_ROOT) -> tuple[Path, int] | None:
    """Our memory cgroup directory and its version (1 or 2); children inherit it."""
    try:
        lines = Path(self_cgroup).read_text().splitlines()
    except OSError:
        return None
    v2_dir = None
    for line in lines:
        hierarchy, _, rest = line.partition(":")
        controllers, _, rel = rest.partition(":")
        rel = rel.lstrip("/")
        if "memory" in controllers.split(","):
            if (Path(root) / "memory" / rel / "memory.oom_control").exists():
                return Path(root) / "memory" / rel, 1
        elif hierarchy == "0" and controllers == "":
            for base in (Path(root), Path(root) / "unified"):
                if (base / rel / "memory.events").exists():
                    v2_dir = base / rel
                    break
            else:
                if (Path(root) / "memory.events").exists():
                    v2_dir = Path(root)  # inside a container the namespace root is ours
    return (v2_dir, 2) if v2_dir is not None else None


def own_cgroup_events_path(self_cgroup: str = SELF_CGROUP_PATH, root: str = CGROUP_ROOT) -> str | None:
    """memory.events (cgroup v2) or memory.oom_control (v1) of our cgroup: both count ``oom_kill``."""
    found = own_memory_cgroup(self_cgroup, root)
    if found is None:
        return None
    directory, version = found
    return str(directory / ("memory.events" if version == 2 else "memory.oom_control"))


def memory_limit_bytes(self_cgroup: str = SELF_CGROUP_PATH, root: str = CGROUP_ROOT) -> int | None:
    """The smaller of our cgroup's memory limit (if any) and total RAM."""
    limits: list[int] = []
    found = own_memory_cgroup(self_cgroup, root)
    if found is not None:
        directory, version = found
        try:
            raw = (directory / ("memory.max" if version == 2 else "memory.limit_in_bytes")).read_text().strip()
        except OSError:
            raw = ""
        if raw.isdigit() and int(raw) < (1 << 60):  # v1 "unlimited" is a huge number, v2 says "max"
            limits.append(int(raw))
    try:
        import psutil

        limits.append(int(psutil.virtual_memory().total))
    except Exception:  # psutil is a dependency, but a broken /proc must not break a diagnosis
        pass
    return min(limits) if limits else None
