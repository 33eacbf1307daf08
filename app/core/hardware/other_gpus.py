"""Names of every display adapter the OS shows (AMD, Intel, NVIDIA without a working driver, virtual ones).

NVML only sees NVIDIA GPUs with a loaded driver; this module asks the OS instead: `lspci -mm` or
/sys/class/drm on Linux, CIM on Windows, system_profiler on macOS. It names, it does not measure.
"""

from __future__ import annotations

import logging
import platform
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from app.core.hardware.system import read_text

logger = logging.getLogger(__name__)

_DISPLAY_CLASSES = ("vga compatible controller", "3d controller", "display controller")
_PCI_VENDORS = {
    "0x1002": "AMD", "0x8086": "Intel", "0x10de": "NVIDIA", "0x1414": "Microsoft",
    "0x1af4": "Virtio", "0x15ad": "VMware", "0x1234": "QEMU", "0x1a03": "ASPEED", "0x5143": "Qualcomm",
}


@dataclass(frozen=True)
class DisplayAdapter:
    name: str
    is_nvidia: bool


def parse_lspci_mm(text: str | None) -> list[DisplayAdapter]:
    """Display adapters from `lspci -mm` lines: slot "class" "vendor" "device" ..."""
    adapters = []
    for line in (text or "").splitlines():
        try:
            fields = shlex.split(line)
        except ValueError:
            continue
        if len(fields) < 4 or fields[1].lower() not in _DISPLAY_CLASSES:
            continue
        vendor, device = fields[2], fields[3]
        adapters.append(DisplayAdapter(f"{vendor} {device}".strip(), "nvidia" in vendor.lower()))
    return adapters


def read_drm_cards(root: Path = Path("/sys/class/drm")) -> list[DisplayAdapter]:
    """Adapters from /sys/class/drm/cardN/device (vendor id, driver, AMD's product_name)."""
    adapters = []
    try:
        cards = sorted(p for p in root.glob("card*") if p.name[4:].isdigit())
    except OSError:
        logger.debug("%s unreadable", root, exc_info=True)
        return []
    for card in cards:
        device = card / "device"
        vendor_id = (read_text(device / "vendor") or "").strip().lower()
        device_id = (read_text(device / "device") or "").strip().lower().removeprefix("0x")
        vendor = _PCI_VENDORS.get(vendor_id, vendor_id or "unknown vendor")
        driver = ""
        for line in (read_text(device / "uevent") or "").splitlines():
            if line.startswith("DRIVER="):
                driver = line.partition("=")[2]
        product = (read_text(device / "product_name") or "").strip()
        name = f"{vendor} {product}" if product else f"{vendor} GPU {device_id}".strip()
        if driver:
            name += f" (driver {driver})"
        adapters.append(DisplayAdapter(name, vendor_id == "0x10de"))
    return adapters


def _run(argv: list[str], timeout: float = 5) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        logger.debug("%s did not run", argv[0], exc_info=True)
        return ""


def _windows_adapters() -> list[DisplayAdapter]:
    command = "Get-CimInstance Win32_VideoController | ForEach-Object { $_.Name }"
    output = _run(["powershell", "-NoProfile", "-NonInteractive", "-Command", command])
    names = [line.strip() for line in output.splitlines() if line.strip()]
    return [DisplayAdapter(name, "nvidia" in name.lower()) for name in names]


def _mac_adapters() -> list[DisplayAdapter]:
    output = _run(["system_profiler", "SPDisplaysDataType"])
    names = [line.split(":", 1)[1].strip() for line in output.splitlines() if "Chipset Model:" in line]
    return [DisplayAdapter(name, "nvidia" in name.lower()) for name in names]


def read_display_adapters() -> list[DisplayAdapter]:
    """Every adapter the OS names; [] where it names none. Never raises."""
    try:
        system = platform.system()
        if system == "Linux":
            lspci = shutil.which("lspci")
            adapters = parse_lspci_mm(_run([lspci, "-mm"])) if lspci else []
            return adapters or read_drm_cards()
        if system == "Windows":
            return _windows_adapters()
        if system == "Darwin":
            return _mac_adapters()
    except Exception:  # naming adapters is a courtesy, never a failure
        logger.warning("display adapters could not be listed", exc_info=True)
    return []
