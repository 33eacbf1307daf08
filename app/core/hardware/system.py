"""Operating system facts for the hardware scan: OS name, WSL2 and containers (cgroup memory: ``cgroup.py``).

Every reader takes its inputs (file texts, a root directory) as arguments so tests can feed recorded
files; the ``read_*`` wrappers point them at the live system and never raise.
"""

from __future__ import annotations

import logging
import os
import platform
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

WSL_LIBCUDA = Path("/usr/lib/wsl/lib/libcuda.so")
WSL_DXG = Path("/dev/dxg")


def read_text(path: str | Path) -> str | None:
    """A small system file's text, or None when it is missing or unreadable."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(1 << 20)
    except FileNotFoundError:
        return None  # the normal answer for a file this system does not have
    except OSError:
        logger.debug("%s unreadable", path, exc_info=True)
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
