"""The CMake arguments that build llama.cpp for *this* processor, from what the ISA probe proved runs.

A native build (-march=native) trusts what the CPU advertises, so an advertised-but-broken extension (AMX in
some virtual machines) ends in SIGILL on the first quantized matrix multiply. Instead every CPU option llama.cpp
has is set explicitly: on for what ran in the probe, off for the rest. Where the probe cannot run (not x86-64
Linux) the build stays native, which is what llama.cpp does by default.

Standard library only: the set-up script uses it before any dependency is installed.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.engine.cpu_isa import FEATURES, IsaReport

# No llama.cpp tests or examples: they double a fresh set-up's build time and nobody runs them.
LEAN_ARGS = ("-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF")
# The test llama-server also needs rpc-server (scale-out work) and the quantizer, both llama.cpp tools.
SERVER_EXTRA_ARGS = ("-DGGML_RPC=ON", "-DLLAMA_BUILD_SERVER=ON", "-DLLAMA_BUILD_APP=OFF")


@dataclass(frozen=True)
class BuildChoice:
    """The CPU part of a build: its CMake arguments and what it uses, in words for the one-line summary."""

    cpu_args: tuple[str, ...]
    uses: tuple[str, ...]  # labels of the extensions compiled in ("AVX2", ...), empty for native
    left_out: tuple[str, ...]  # labels advertised by the CPU that fault here
    native: bool

    def cmake_args(self, *, server: bool = False) -> tuple[str, ...]:
        return self.cpu_args + LEAN_ARGS + (SERVER_EXTRA_ARGS if server else ())


def choose(report: IsaReport) -> BuildChoice:
    if not report.probed:
        return BuildChoice(cpu_args=("-DGGML_NATIVE=ON",), uses=(), left_out=(), native=True)
    args = ["-DGGML_NATIVE=OFF"]
    for feature in FEATURES:
        args.append(f"-D{feature.ggml_option}={'ON' if report.runs(feature.name) else 'OFF'}")
    return BuildChoice(
        cpu_args=tuple(args),
        uses=tuple(feature.label for feature in report.usable()),
        left_out=tuple(feature.label for feature in report.unusable()),
        native=False,
    )


def portable() -> BuildChoice:
    """llama.cpp's plain GGML_NATIVE=OFF build: its default x86 set, whatever this CPU has. The benchmark's baseline."""
    return BuildChoice(cpu_args=("-DGGML_NATIVE=OFF",), uses=(), left_out=(), native=False)


def summary_line(choice: BuildChoice, compiler_reason: str | None = None) -> str:
    """One line for the set-up's output (English: the set-up runs before the app and its language exist);
    ``compiler_reason``: why AMX is left out although the processor runs it (amx_compiler.py)."""
    if choice.native:
        line = "Engine build: native for this processor (its instruction sets could not be tested here)."
    else:
        line = f"Engine build for this processor: {', '.join(choice.uses) or 'baseline x86-64'}."
    faulting = [label for label in choice.left_out if not (compiler_reason and label.startswith("AMX"))]
    if faulting:
        line += (f" This processor advertises {', '.join(faulting)} but cannot run it here, "
                 "so the engines are built without it.")
    if compiler_reason:
        line += f" AMX is left out because {compiler_reason}."
    return line
