"""Which instruction sets this processor advertises *and* can actually run.

A CPU (or a virtual machine's CPU model) can advertise an instruction set in /proc/cpuinfo that faults when it
is used: AMX tiles in some VMs are the case that made every quantized model die with SIGILL in a natively built
llama.cpp. So each advertised extension llama.cpp's CPU backend can use is tried for real: a few bytes of its
instructions run in a child process, and a child killed by SIGILL means "advertised but unusable here".

Standard library only: the set-up script runs this before any dependency is installed.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from enum import StrEnum

from app.core.process.frozen import child_argv

VZEROUPPER = bytes.fromhex("c5f877")
RET = bytes.fromhex("c3")
_TILE_PERMISSION_DENIED = 3  # child exit code: the kernel would not grant AMX tile state
_ARCH_REQ_XCOMP_PERM = 0x1023
_XFEATURE_XTILEDATA = 18
_SYS_ARCH_PRCTL = 158
_PROBE_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class IsaFeature:
    """One llama.cpp CPU build option and the instructions that prove it runs."""

    name: str
    label: str
    cpuinfo_flags: tuple[str, ...]  # all must be advertised
    ggml_option: str
    code: bytes
    requires: tuple[str, ...] = ()  # features that must be usable too
    needs_tiles: bool = False


def _tile_code(*body_hex: str) -> bytes:
    # ldtilecfg (%rdi); tilezero tmm0..2; body; tilerelease
    return bytes.fromhex("c4e2784907" "c4e27b49c0" "c4e27b49c8" "c4e27b49d0" + "".join(body_hex) + "c4e27849c0")


FEATURES: tuple[IsaFeature, ...] = (
    IsaFeature("sse42", "SSE4.2", ("sse4_2",), "GGML_SSE42", bytes.fromhex("f20f38f1c0")),  # crc32
    IsaFeature("avx", "AVX", ("avx",), "GGML_AVX", bytes.fromhex("c5fc57c0") + VZEROUPPER),  # vxorps ymm
    IsaFeature("f16c", "F16C", ("f16c",), "GGML_F16C", bytes.fromhex("c4e27d13c0") + VZEROUPPER, ("avx",)),
    IsaFeature("fma", "FMA", ("fma",), "GGML_FMA", bytes.fromhex("c4e27db8c0") + VZEROUPPER, ("avx",)),
    IsaFeature("avx2", "AVX2", ("avx2",), "GGML_AVX2", bytes.fromhex("c5fdfec0") + VZEROUPPER, ("avx",)),
    IsaFeature("bmi2", "BMI2", ("bmi2",), "GGML_BMI2", bytes.fromhex("c4e27bf5c0")),  # pdep
    IsaFeature("avx_vnni", "AVX-VNNI", ("avx_vnni",), "GGML_AVX_VNNI",
               bytes.fromhex("c4e27d50c0") + VZEROUPPER, ("avx2",)),
    IsaFeature("avx512", "AVX-512", ("avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw"), "GGML_AVX512",
               bytes.fromhex("62f17d48efc0" "62f17d48fcc0") + VZEROUPPER, ("avx2",)),  # vpxord, vpaddb zmm
    IsaFeature("avx512_vbmi", "AVX-512 VBMI", ("avx512vbmi",), "GGML_AVX512_VBMI",
               bytes.fromhex("62f27d488dc0") + VZEROUPPER, ("avx512",)),
    IsaFeature("avx512_vnni", "AVX-512 VNNI", ("avx512_vnni",), "GGML_AVX512_VNNI",
               bytes.fromhex("62f27d4850c0") + VZEROUPPER, ("avx512",)),
    IsaFeature("avx512_bf16", "AVX-512 BF16", ("avx512_bf16",), "GGML_AVX512_BF16",
               bytes.fromhex("62f27e4852c0") + VZEROUPPER, ("avx512",)),
    IsaFeature("amx_tile", "AMX", ("amx_tile",), "GGML_AMX_TILE", _tile_code(), ("avx512_vnni",), needs_tiles=True),
    IsaFeature("amx_int8", "AMX-INT8", ("amx_int8",), "GGML_AMX_INT8", _tile_code("c4e26b5ec1"),  # tdpbssd
               ("amx_tile",), needs_tiles=True),
    IsaFeature("amx_bf16", "AMX-BF16", ("amx_bf16",), "GGML_AMX_BF16", _tile_code("c4e26a5cc1"),  # tdpbf16ps
               ("amx_tile",), needs_tiles=True),
)
_BY_NAME = {feature.name: feature for feature in FEATURES}
# ggml's system_info names (what an engine prints it was compiled with) -> our feature names.
SYSTEM_INFO_NAMES = {
    "AVX": "avx", "AVX2": "avx2", "F16C": "f16c", "FMA": "fma", "BMI2": "bmi2", "AVX_VNNI": "avx_vnni",
    "AVX512": "avx512", "AVX512_VBMI": "avx512_vbmi", "AVX512_VNNI": "avx512_vnni", "AVX512_BF16": "avx512_bf16",
    "AMX_INT8": "amx_int8",
}


def label(name: str) -> str:
    return _BY_NAME[name].label


class Verdict(StrEnum):
    RUNS = "runs"
    FAULTS = "faults"  # advertised, but executing it killed the probe (SIGILL and friends)
    NOT_ADVERTISED = "not_advertised"
    BLOCKED = "blocked"  # a feature it depends on does not run


@dataclass(frozen=True)
class IsaReport:
    """What the probe found; ``probed`` is False where it cannot run (not x86-64 Linux)."""

    probed: bool
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)

    def runs(self, name: str) -> bool:
        return self.verdicts.get(name) is Verdict.RUNS

    def usable(self) -> list[IsaFeature]:
        return [feature for feature in FEATURES if self.runs(feature.name)]

    def unusable(self) -> list[IsaFeature]:
        """Advertised by the CPU, yet they fault here: the reason a native build crashes."""
        return [feature for feature in FEATURES if self.verdicts.get(feature.name) is Verdict.FAULTS]

    def to_dict(self) -> dict:
        return {"probed": self.probed, "verdicts": {k: v.value for k, v in self.verdicts.items()},
                "reasons": dict(self.reasons)}

    @classmethod
    def from_dict(cls, data: dict) -> IsaReport:
        return cls(probed=bool(data.get("probed")),
                   verdicts={k: Verdict(v) for k, v in dict(data.get("verdicts", {})).items()},
                   reasons=dict(data.get("reasons", {})))


def advertised_flags(cpuinfo_text: str) -> set[str]:
    for line in cpuinfo_text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() == "flags":
            return set(value.split())
    return set()


def can_probe() -> bool:
    return platform.system() == "Linux" and platform.machine().lower() in ("x86_64", "amd64")


def _read_cpuinfo() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


def run_in_child(name: str, *, python: str | None = None, timeout_s: float = _PROBE_TIMEOUT_S) -> tuple[Verdict, str]:
    """Execute one feature's instructions in a fresh interpreter; a fault kills only that child."""
    argv = child_argv("cpu-feature", [name], python)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, cwd=root, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return Verdict.FAULTS, f"probe could not run: {exc}"
    return _verdict_from_exit(done.returncode, done.stderr)


def _verdict_from_exit(returncode: int, stderr: str) -> tuple[Verdict, str]:
    if returncode == 0:
        return Verdict.RUNS, ""
    if returncode == _TILE_PERMISSION_DENIED:
        return Verdict.FAULTS, "the system does not grant AMX tile state to programs"
    if returncode < 0:
        try:
            signame = signal.Signals(-returncode).name
        except ValueError:
            signame = f"signal {-returncode}"
        return Verdict.FAULTS, f"killed by {signame}"
    return Verdict.FAULTS, (stderr.strip().splitlines() or [f"exit status {returncode}"])[-1]


def probe(cpuinfo_text: str | None = None, *, runner=run_in_child) -> IsaReport:
    """Try every advertised feature, in dependency order; ``runner(name) -> (Verdict, reason)``."""
    if not can_probe():
        return IsaReport(probed=False)
    flags = advertised_flags(_read_cpuinfo() if cpuinfo_text is None else cpuinfo_text)
    verdicts: dict[str, Verdict] = {}
    reasons: dict[str, str] = {}
    for feature in FEATURES:
        if not all(flag in flags for flag in feature.cpuinfo_flags):
            verdicts[feature.name] = Verdict.NOT_ADVERTISED
        elif not all(verdicts.get(dep) is Verdict.RUNS for dep in feature.requires):
            verdicts[feature.name] = Verdict.BLOCKED
        else:
            verdicts[feature.name], reason = runner(feature.name)
            if reason:
                reasons[feature.name] = reason
    return IsaReport(probed=True, verdicts=verdicts, reasons=reasons)


# --- the child side -------------------------------------------------------------------------------------------


def _child(args: list[str]) -> None:
    """``args[0]`` is a feature's name, or ``hex:<bytes>`` for raw code (the tests run a known-bad instruction)."""
    name = args[0]
    if name.startswith("hex:"):
        execute(bytes.fromhex(name[4:]) + RET)
        sys.exit(0)
    feature = _BY_NAME[name]
    if feature.needs_tiles and not _request_tile_permission():
        sys.exit(_TILE_PERMISSION_DENIED)
    execute(feature.code + RET)
    sys.exit(0)


def _request_tile_permission() -> bool:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    return libc.syscall(_SYS_ARCH_PRCTL, _ARCH_REQ_XCOMP_PERM, _XFEATURE_XTILEDATA) == 0


def _tile_config() -> bytes:
    config = bytearray(64)
    config[0] = 1  # palette 1
    for tile in range(3):
        config[16 + 2 * tile] = 64  # bytes per row
        config[48 + tile] = 16  # rows
    return bytes(config)


def execute(code: bytes) -> None:
    """Run machine code that takes one pointer argument (the AMX tile config) and returns (Linux: see can_probe)."""
    import ctypes
    import mmap

    if sys.platform == "win32":
        raise NotImplementedError("machine code is run only where can_probe() is true (Linux)")

    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(code)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    config = ctypes.create_string_buffer(_tile_config(), 64)
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)(ctypes.addressof(config))


def main() -> None:
    print(json.dumps(probe().to_dict()))


if __name__ == "__main__":
    main()
