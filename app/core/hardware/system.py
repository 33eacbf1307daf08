"""Operating system facts for the hardware scan: OS name, WSL2, containers and cgroup memory limits.

Every reader takes its inputs (file texts, a root directory) as arguments so tests can feed recorded
files; the ``read_*`` wrappers point them at the live system and never raise.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from pathlib import Path

# cgroup v1 writes "no limit" as a huge page-aligned number (2^63 rounded down to a page), v2 as "max".
_UNLIMITED_THRESHOLD = 1 << 60
WSL_LIBCUDA = Path("/usr/lib/wsl/lib/libcuda.so")
WSL_DXG = Path("/dev/dxg")


def read_text(path: str | Path) -> str | None:
    """A small system file's text, or None when it is missing or unreadable."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(1 << 20)
    except OSError:
        return None


# --- OS --------------------------------------------------------------------------------------------


def parse_os_release(text: str | None) -> str | None:
    """PRETTY_NAME from /etc/os-release text, e.g. 'Ubuntu 22.04.4 LTS'."""
    for line in (text or "").splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "PRETTY_NAME":
            return value.strip().strip('"').strip("'") or None
    return None


def os_description() -> str:
    """'Debian GNU/Linux 12 (bookworm), kernel 6.5.0' / 'Windows 11 (10.0.22631)' / 'macOS 14.4'."""
    system = platform.system()
    if system == "Linux":
        pretty = parse_os_release(read_text("/etc/os-release")) or "Linux"
        return f"{pretty}, kernel {platform.release()}"
    if system == "Darwin":
        return f"macOS {platform.mac_ver()[0] or platform.release()}"
    if system == "Windows":
        return f"Windows {platform.release()} ({platform.version()})"
    return f"{system} {platform.release()}".strip()


# --- WSL -------------------------------------------------------------------------------------------


def parse_wsl_version(proc_version: str | None) -> int | None:
    """1 or 2 when /proc/version names a WSL kernel, else None.

    WSL2 kernels say 'microsoft-standard-WSL2' (older ones '-microsoft-standard'); WSL1 fakes a
    kernel string with a capital 'Microsoft'.
    """
    text = (proc_version or "").lower()
    if "microsoft" not in text:
        return None
    if "wsl2" in text or "microsoft-standard" in text:
        return 2
    return 1


@dataclass(frozen=True)
class WslInfo:
    version: int | None
    has_dxg: bool
    has_libcuda: bool

    @property
    def gpu_passthrough(self) -> bool:
        return self.version == 2 and self.has_dxg and self.has_libcuda


def read_wsl() -> WslInfo:
    version = parse_wsl_version(read_text("/proc/version")) if platform.system() == "Linux" else None
    if version is None:
        return WslInfo(None, False, False)
    return WslInfo(version, WSL_DXG.exists(), WSL_LIBCUDA.exists())


# --- containers ------------------------------------------------------------------------------------

_CONTAINER_CGROUP_MARKERS = ("docker", "kubepods", "containerd", "lxc", "libpod", "crio", "podman")


def detect_container(
    *, dockerenv: bool, containerenv: bool, pid1_cgroup: str | None, environ: dict[str, str]
) -> str | None:
    """A name for the container runtime ('docker', 'podman', 'kubernetes', ...) or None."""
    if containerenv:
        return "podman"
    if dockerenv:
        return "docker"
    if environ.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes"
    if environ.get("container"):
        return environ["container"]
    for line in (pid1_cgroup or "").splitlines():
        path = line.split(":", 2)[-1]
        for marker in _CONTAINER_CGROUP_MARKERS:
            if marker in path:
                return marker
    return None


def read_container() -> str | None:
    if platform.system() != "Linux":
        return None
    return detect_container(
        dockerenv=os.path.exists("/.dockerenv"),
        containerenv=os.path.exists("/run/.containerenv"),
        pid1_cgroup=read_text("/proc/1/cgroup"),
        environ=dict(os.environ),
    )


# --- cgroup memory ---------------------------------------------------------------------------------


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


def read_cgroup_memory_at(
    proc_self_cgroup: str | None, root: Path = Path("/sys/fs/cgroup")
) -> CgroupMemory | None:
    """Limit and usage from a cgroup v2 tree (memory.max) or a v1 memory controller (memory.limit_in_bytes)."""
    v2_path = cgroup_path(proc_self_cgroup, None)
    v1_path = cgroup_path(proc_self_cgroup, "memory")
    if v1_path is not None and (root / "memory").is_dir():
        return _read_chain(_chain(root / "memory", v1_path), 1)
    if v2_path is not None and (root / "cgroup.controllers").exists():
        return _read_chain(_chain(root, v2_path), 2)
    return None


def _read_chain(dirs: list[Path], version: int) -> CgroupMemory | None:
    if not dirs:
        return None
    limit_name, usage_name, inactive_key = (
        ("memory.max", "memory.current", "inactive_file")
        if version == 2
        else ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file")
    )
    best: tuple[int, Path] | None = None
    for directory in dirs:
        limit = parse_limit(read_text(directory / limit_name))
        if limit is not None and (best is None or limit < best[0]):
            best = (limit, directory)
    where = best[1] if best else dirs[0]
    usage = _parse_int(read_text(where / usage_name))
    reclaimable = _stat_value(read_text(where / "memory.stat"), inactive_key)
    return CgroupMemory(version, best[0] if best else None, usage, reclaimable)


def read_cgroup_memory() -> CgroupMemory | None:
    if platform.system() != "Linux":
        return None
    try:
        return read_cgroup_memory_at(read_text("/proc/self/cgroup"))
    except OSError:
        return None
