"""Whether this computer's C++ compiler builds llama.cpp's AMX code correctly, proved by compiling and running it.

The processor can run AMX and the build can still die with SIGILL on the first quantized matrix multiply: GCC 12
(Debian 12's 12.2.0) drops the stores that fill in a tile configuration before ``_tile_loadconfig`` reads it, so
ggml's ``ggml_tile_config_init`` loads a configuration with every tile empty and the next ``tilezero`` faults
(seen here on a Xeon with AMX: ``ldtilecfg`` of a zeroed block with only the palette set, in the disassembly of
libggml-cpu). The ISA probe runs hand-written bytes, so it cannot see this; this check compiles the same pattern with
the compiler the engine build will use and runs it. When it fails, the engines are built without AMX.

Standard library only: the set-up runs it before any dependency is installed.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

from app.core.engine.cpu_isa import IsaReport, Verdict

AMX_FEATURES = ("amx_tile", "amx_int8", "amx_bf16")
TIMEOUT_S = 60.0
# ggml's pattern: a local tile configuration filled in field by field, loaded, then a tile used and stored
SOURCE = r"""
#include <immintrin.h>
#include <cstdint>
#include <unistd.h>
#include <sys/syscall.h>
struct tile_config_t { uint8_t palette_id = 0; uint8_t start_row = 0; uint8_t reserved_0[14] = {0};
                       uint16_t colsb[16] = {0}; uint8_t rows[16] = {0}; };
__attribute__((noinline)) static void configure() {
    alignas(64) tile_config_t tc = {};
    tc.palette_id = 1;
    for (int i = 0; i < 8; ++i) { tc.rows[i] = 16; tc.colsb[i] = 64; }
    _tile_loadconfig(&tc);
}
int main() {
    if (syscall(SYS_arch_prctl, 0x1023, 18) != 0) return 3;
    configure();
    alignas(64) int32_t out[16 * 16] = {1};
    _tile_zero(4);
    _tile_stored(4, out, 64);
    _tile_release();
    return out[0];
}
"""
FLAGS = ("-O3", "-mamx-tile", "-mamx-int8", "-mavx512f", "-std=c++17")


def build_compiler() -> str | None:
    """The C++ compiler CMake will pick: $CXX, else c++ / g++ / clang++ on PATH."""
    for candidate in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if candidate and shutil.which(candidate.split()[0]):
            return candidate
    return None


def _version(compiler: str) -> str:
    try:
        done = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return compiler
    return (done.stdout.splitlines() or [compiler])[0].strip()


def miscompiles_amx(compiler: str | None = None) -> str | None:
    """None when ``compiler`` builds AMX code that runs here; else why not, in one English line (the set-up's)."""
    compiler = compiler or build_compiler()
    if compiler is None:
        return "no C++ compiler was found to test AMX code with"
    with tempfile.TemporaryDirectory(prefix="gguf-amx-") as folder:
        source, program = Path(folder) / "amx.cpp", Path(folder) / "amx"
        source.write_text(SOURCE, encoding="utf-8")
        try:
            built = subprocess.run([*compiler.split(), *FLAGS, str(source), "-o", str(program)], capture_output=True,
                                   text=True, timeout=TIMEOUT_S, check=False)
            if built.returncode != 0:
                return f"{_version(compiler)} cannot compile AMX code"
            ran = subprocess.run([str(program)], capture_output=True, timeout=TIMEOUT_S, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"the AMX test program could not run ({exc})"
    if ran.returncode == 0:
        return None
    if ran.returncode == 3:
        return "the system does not grant AMX tile state to programs"
    how = f"exit status {ran.returncode}"
    if ran.returncode < 0:
        try:
            how = signal.Signals(-ran.returncode).name
        except ValueError:
            how = f"signal {-ran.returncode}"
    return f"{_version(compiler)} builds llama.cpp's AMX code wrongly (the test program was killed by {how})"


def with_compiler_verdict(report: IsaReport, check=miscompiles_amx) -> tuple[IsaReport, str | None]:
    """``report`` with AMX marked unusable when the processor runs it but the compiler cannot build it right,
    and the reason (None when nothing changed). Only costs a compile where AMX runs."""
    if not report.runs("amx_tile"):
        return report, None
    reason = check()
    if reason is None:
        return report, None
    verdicts = dict(report.verdicts) | {name: Verdict.FAULTS for name in AMX_FEATURES if name in report.verdicts}
    reasons = dict(report.reasons) | {name: reason for name in AMX_FEATURES if name in report.verdicts}
    return replace(report, verdicts=verdicts, reasons=reasons), reason
