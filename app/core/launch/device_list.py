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
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

LIST_TIMEOUT_S = 60.0  # a CUDA build initialises the card (and may compile kernels) before it answers
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
    code (None: it did not finish) and the output's last lines as evidence."""

    devices: tuple[ListedDevice, ...] | None
    returncode: int | None
    tail: tuple[str, ...]


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


def list_devices(launcher: Path, timeout_s: float = LIST_TIMEOUT_S) -> DeviceListing:
    """Run ``launcher --list-devices`` (``llama serve --list-devices`` for the single program)."""
    from app.core.launch.discovery import server_argv_prefix

    try:
        done = subprocess.run([*server_argv_prefix(launcher), "--list-devices"], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return DeviceListing(None, None, (f"{launcher} --list-devices did not answer within {timeout_s:.0f} s",))
    except OSError as error:
        logger.info("%s --list-devices could not run: %s", launcher, error)
        return DeviceListing(None, None, (f"{launcher}: {error}",))
    stdout = done.stdout.decode("utf-8", errors="replace")
    stderr = done.stderr.decode("utf-8", errors="replace")
    tail = tuple((stderr + "\n" + stdout).strip().splitlines()[-20:])
    return DeviceListing(parse_device_list(stdout), done.returncode, tail)
