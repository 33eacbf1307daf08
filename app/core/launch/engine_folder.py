"""An engine folder checked as a unit before it is offered: the launcher, the llama/ggml libraries it and they
import, a CPU backend where backends load at run time, and a CUDA build's runtime libraries.

The layouts are llama.cpp's own release archives (.github/workflows/release.yml at ggml-org/llama.cpp commit
002efcd4e56d7e23bf53fb472a15bdb493f223d1):
- ``llama-bNNNN-bin-win-cpu-x64.zip``: ``build\\bin\\Release\\*`` of a ``GGML_BACKEND_DL=ON``,
  ``GGML_CPU_ALL_VARIANTS=ON`` build (the programs, ``llama.dll``, ``ggml.dll``, ``ggml-base.dll``,
  ``ggml-cpu-<variant>.dll``…) plus ``libomp140.x86_64.dll``;
- ``-win-vulkan-x64.zip`` / ``-win-cuda-12.4-x64.zip`` / ``-win-cuda-13.3-x64.zip``: ``ggml-vulkan.dll`` /
  ``ggml-cuda.dll`` with the CPU zip's files added by the release job; the CUDA runtime is a separate
  ``cudart-llama-bin-win-cuda-<ver>-x64.zip`` holding ``cudart64_*.dll cublas64_*.dll cublasLt64_*.dll``, to be
  unpacked next to ``ggml-cuda.dll``;
- ``-bin-ubuntu-x64.tar.gz`` / ``-bin-ubuntu-vulkan-x64.tar.gz``: ``build/bin`` of a ``GGML_BACKEND_DL=ON`` build
  under ``llama-bNNNN/`` (``libggml-cpu-*.so``, ``libggml-vulkan.so``).

Recent builds make ``llama-server`` a thin launcher of ``llama-server-impl`` and ``llama-common`` libraries; which
libraries a file needs is read from the file itself (a PE import table and an ELF ``DT_NEEDED`` list both hold
the names as plain text), so a library is called missing only when a file that is present names it.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.core.text import T, Text

logger = logging.getLogger(__name__)

LAUNCHER_NAMES = ("llama-server.exe", "llama-server", "llama.exe", "llama")  # `llama serve` = `llama-server`
MAX_SCAN_BYTES = 2 * 1024 ** 3  # a ggml-cuda library is several hundred MB; where its import table sits varies
CHUNK_BYTES = 8 * 1024 * 1024  # read in chunks (overlapping by a name's length): memory stays small
_OVERLAP = 256
_LIBRARY = re.compile(
    rb"(?<![\w.+-])((?:lib)?(?:llama[\w-]*|ggml|ggml-base|mtmd)\.(?:dll|so(?:\.\d+)*|dylib))(?![\w.])", re.IGNORECASE)
_CUDA_RUNTIME = re.compile(
    rb"(?<![\w.+-])((?:cudart64|cublas64|cublasLt64)_\d+\.dll|lib(?:cudart|cublas|cublasLt)\.so\.\d+)(?![\w.])",
    re.IGNORECASE)
_BACKEND_FILE = re.compile(r"^(?:lib)?ggml-(?P<name>[a-z]+)(?:-[\w]+)?\.(?:dll|so|dylib)$", re.IGNORECASE)
_FOLDER_CUDA = re.compile(r"cuda-?(\d+(?:\.\d+)?)", re.IGNORECASE)
_BACKEND_LABELS = {"cuda": "CUDA", "vulkan": "Vulkan", "hip": "ROCm", "sycl": "SYCL", "metal": "Metal",
                   "opencl": "OpenCL", "cpu": "CPU"}
_LINUX_LIBRARY_DIRS = ("/usr/local/cuda/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib64")


@dataclass(frozen=True)
class FolderCheck:
    """One engine folder. ``missing``: files a present file names (or the layout needs) that are nowhere to be
    found; ``cuda_version``: "12" from the runtime the CUDA backend imports, "12.4" from a release folder name."""

    launcher: str
    backends: tuple[str, ...]
    cuda_version: str | None
    missing: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.missing

    @property
    def missing_cuda_runtime(self) -> tuple[str, ...]:
        return tuple(name for name in self.missing if _CUDA_RUNTIME.fullmatch(name.encode()))

    def problem(self) -> Text | None:
        """One sentence when the folder cannot run as it is; None when every file is there."""
        if not self.missing:
            return None
        names = ", ".join(self.missing)
        if self.missing_cuda_runtime:
            return T("This CUDA build of llama.cpp cannot use the graphics card: the CUDA runtime files it needs are "
                     "missing ({names}).",
                     "这个 CUDA 版 llama.cpp 无法使用显卡：缺少它需要的 CUDA 运行库文件（{names}）。", names=names)
        return T("This llama.cpp folder is incomplete: {names} is missing (removed by a clean-up or an antivirus "
                 "program, or not unpacked).",
                 "这个 llama.cpp 文件夹不完整：缺少 {names}（可能被清理工具或杀毒软件删除，或没有解压完整）。",
                 names=names)

    def next_step(self) -> Text | None:
        if not self.missing:
            return None
        if self.missing_cuda_runtime and self.launcher.lower().endswith(".exe"):
            version = self.cuda_version or "12.4"
            return T("Download cudart-llama-bin-win-cuda-{version}-x64.zip from the same llama.cpp release and unpack "
                     "it into the folder of llama-server.exe, or use the Vulkan build.",
                     "从同一个 llama.cpp 发布页下载 cudart-llama-bin-win-cuda-{version}-x64.zip，解压到 "
                     "llama-server.exe 所在的文件夹；或改用 Vulkan 版本。", version=version)
        if self.missing_cuda_runtime:
            major = (self.cuda_version or "12").split(".")[0]
            return T("Install NVIDIA's CUDA {major} runtime libraries (cudart and cuBLAS), or use the Vulkan build.",
                     "安装 NVIDIA 的 CUDA {major} 运行库（cudart 和 cuBLAS），或改用 Vulkan 版本。", major=major)
        return T("Unpack the whole llama.cpp release archive again (allow the folder in the antivirus program if it "
                 "removed the file), or choose another llama-server.",
                 "重新完整解压 llama.cpp 发布包（如果是杀毒软件删除了文件，请在杀毒软件中允许该文件夹），"
                 "或选择另一个 llama-server。")

    def evidence(self) -> tuple[str, ...]:
        lines = [f"engine folder: {Path(self.launcher).parent}",
                 f"backends: {', '.join(self.backends) or 'none found'}"]
        if self.cuda_version:
            lines.append(f"CUDA runtime version: {self.cuda_version}")
        lines += [f"missing: {name}" for name in self.missing]
        return tuple(lines)


def imported_names(path: Path, pattern: re.Pattern[bytes] = _LIBRARY) -> list[str]:
    """Library names written in a program or library file (its import table / DT_NEEDED), in file order."""
    names: dict[str, None] = {}
    try:
        with path.open("rb") as handle:
            tail, read = b"", 0
            while read < MAX_SCAN_BYTES:
                chunk = handle.read(CHUNK_BYTES)
                if not chunk:
                    break
                read += len(chunk)
                data = tail + chunk
                for match in pattern.finditer(data):
                    names[match.group(1).decode("ascii")] = None
                tail = data[-_OVERLAP:]
    except OSError as error:
        logger.info("could not read %s: %s", path, error)
    return list(names)


def _present(folder: Path) -> dict[str, Path]:
    try:
        return {child.name.lower(): child for child in folder.iterdir() if child.is_file()}
    except OSError:
        return {}


def _backends(files: Iterable[str]) -> tuple[str, ...]:
    found: list[str] = []
    for name in files:
        match = _BACKEND_FILE.match(name)
        label = _BACKEND_LABELS.get(match.group("name").lower()) if match else None
        if label and label not in found:
            found.append(label)
    return tuple(found)


def _library_closure(launcher: Path, files: dict[str, Path]) -> tuple[list[str], list[Path]]:
    """Names of llama/ggml libraries needed by the launcher and, in turn, by those found next to it."""
    missing: list[str] = []
    seen: set[str] = set()
    queue = [launcher]
    scanned: list[Path] = []
    while queue:
        current = queue.pop(0)
        scanned.append(current)
        for name in imported_names(current):
            key = name.lower()
            if key in seen or key == current.name.lower():
                continue
            seen.add(key)
            if key in files:
                queue.append(files[key])
            else:
                missing.append(name)
    return missing, scanned


def default_search_dirs(windows: bool) -> list[Path]:
    """Where the system loader also looks for a CUDA runtime: PATH on Windows; LD_LIBRARY_PATH and the usual
    library folders on Linux."""
    variable = "PATH" if windows else "LD_LIBRARY_PATH"
    dirs = [Path(part) for part in os.environ.get(variable, "").split(os.pathsep) if part]
    if not windows:
        dirs += [Path(folder) for folder in _LINUX_LIBRARY_DIRS]
    return dirs


def _linker_cache() -> bytes:
    try:
        return Path("/etc/ld.so.cache").read_bytes()
    except OSError:
        return b""


def _found_elsewhere(name: str, dirs: Sequence[Path], linker_cache: bytes) -> bool:
    if name.encode() in linker_cache:
        return True
    return any((folder / name).is_file() for folder in dirs)


def _cuda_runtime(files: dict[str, Path], dirs: Sequence[Path], linker_cache: bytes) -> tuple[str | None, list[str]]:
    backend = next((path for key, path in files.items() if _BACKEND_FILE.match(key)
                    and key.removeprefix("lib").startswith("ggml-cuda")), None)
    if backend is None:
        return None, []
    needed = imported_names(backend, _CUDA_RUNTIME)
    major = next((found for name in needed if (found := _runtime_major(name))), None)
    missing = [name for name in needed if name.lower() not in files and not _found_elsewhere(name, dirs, linker_cache)]
    return major, missing


def _runtime_major(name: str) -> str | None:
    """"cudart64_12.dll" / "libcudart.so.13" -> "12" / "13"."""
    match = re.search(r"_(\d+)\.dll$|\.so\.(\d+)$", name, re.IGNORECASE)
    return (match.group(1) or match.group(2)) if match else None


def _folder_cuda_version(folder: Path) -> str | None:
    for part in (folder.name, folder.parent.name):
        match = _FOLDER_CUDA.search(part)
        if match:
            return match.group(1)
    return None


def check_engine_folder(launcher: Path, *, search_dirs: Sequence[Path] | None = None,
                        linker_cache: bytes | None = None) -> FolderCheck:
    """Check the folder of ``launcher`` (llama-server or the single ``llama`` program) as a unit. ``search_dirs``
    and ``linker_cache`` default to this system's (tests pass their own)."""
    folder = launcher.parent
    files = _present(folder)
    windows = launcher.name.lower().endswith(".exe")
    dirs = default_search_dirs(windows) if search_dirs is None else list(search_dirs)
    cache = (_linker_cache() if not windows else b"") if linker_cache is None else linker_cache
    if launcher.name.lower() not in files:
        return FolderCheck(str(launcher), (), None, (launcher.name,))
    missing, _ = _library_closure(launcher, files)
    backends = _backends(files)
    if backends and "CPU" not in backends and _loads_backends_at_run_time(files):
        missing.append("ggml-cpu-*.dll" if windows else "libggml-cpu-*.so")
    major, runtime_missing = _cuda_runtime(files, dirs, cache)
    folder_version = _folder_cuda_version(folder)
    version = folder_version if folder_version and (major is None or folder_version.split(".")[0] == major) else major
    return FolderCheck(str(launcher), backends, version, tuple(missing + runtime_missing))


def _loads_backends_at_run_time(files: dict[str, Path]) -> bool:
    """A GGML_BACKEND_DL build: its ggml library imports no backend, it finds ggml-*.dll files when it starts."""
    ggml = files.get("ggml.dll") or files.get("libggml.so") or files.get("libggml.dylib")
    if ggml is None:
        return False
    return not any(_BACKEND_FILE.match(name.lower()) for name in imported_names(ggml, re.compile(
        rb"(?<![\w.+-])((?:lib)?ggml-(?!base)[a-z]+(?:-\w+)?\.(?:dll|so|dylib))(?![\w.])", re.IGNORECASE)))


def quick_cuda_version(launcher: Path) -> str | None:
    """The CUDA version of a build from file names only (no file is read): a release folder's name ("cuda-13.3"),
    else the major of a CUDA runtime library beside it (cudart64_12.dll, libcudart.so.12). For callers that cannot
    wait for ``check_engine_folder``'s scan of a ggml-cuda library of several hundred MB."""
    folder = launcher.parent
    named = _folder_cuda_version(folder)
    if named:
        return named
    runtime = sorted(name for name in _present(folder) if _CUDA_RUNTIME.fullmatch(name.encode()))
    return next((major for name in runtime if (major := _runtime_major(name))), None)


def find_launcher(folder: Path) -> Path | None:
    """The program in an engine folder that serves: llama-server, else the single ``llama`` program."""
    for name in LAUNCHER_NAMES:
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None
