"""Find a llama-server (the one the app ships first) and learn what it is: version, build, backends, flags.

Builds differ (flags were renamed and removed over time; some builds report build 0), so the flags come
from the binary's own ``--help``. Results are cached per file identity (path, mtime, size, inode), in memory and
on disk, so a binary replaced at the same path (a rebuild, an upgrade) is inspected again.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path

from app.core.bounded_json import read_json
from app.core.engine.shipped import shipped_llama_server
from app.core.paths import cache_dir
from app.core.problem import Fix, FixAction, UserError
from app.core.text import T

logger = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 20.0
CACHE_VERSION = 1
EXE_NAME = "llama-server.exe" if os.name == "nt" else "llama-server"
# llama.cpp's single program: `llama serve` is `llama-server` (huggingface/hub-docs#2593, citing llama.cpp discussion
# #23875: "`llama serve` and `llama-server` are the same server"; on Windows `llama.exe serve -m "model.gguf"`,
# mostlygeek/llama-swap#1036). Used wherever a llama-server is looked for, after it.
SINGLE_EXE_NAME = "llama.exe" if os.name == "nt" else "llama"
SERVE_COMMAND = "serve"
# what the window and the CLI offer when no usable llama-server is found (the CLI names its flags)
CHOOSE_SERVER_BIN = FixAction(Fix.CHOOSE_SERVER_BIN)
_BACKEND_PATTERNS = {
    "CUDA": r"\bCUDA\b|ggml_cuda", "Vulkan": r"\bVulkan\b|ggml_vulkan", "Metal": r"\bMetal\b|ggml_metal",
    "ROCm": r"\bROCm\b|\bHIP\b|ggml_hip", "SYCL": r"\bSYCL\b", "OpenCL": r"\bOpenCL\b", "CANN": r"\bCANN\b",
    "MUSA": r"\bMUSA\b", "BLAS": r"\bBLAS\b", "RPC": r"\bRPC\b",
}
_memory_cache: dict[str, BinaryFacts] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class BinaryFacts:
    path: str
    version_text: str
    build_number: int | None
    compiled_backends: tuple[str, ...]
    flag_help: dict[str, str] = field(default_factory=dict)  # every accepted flag -> its help line(s)


def is_single_program(path: Path | str) -> bool:
    """The single ``llama`` program (which serves as ``llama serve``), not a llama-server."""
    return Path(path).name.lower() in ("llama", "llama.exe")


def server_argv_prefix(path: Path | str) -> tuple[str, ...]:
    """How to start this program as the server: ``[llama-server]`` or ``[llama, serve]``."""
    return (str(path), SERVE_COMMAND) if is_single_program(path) else (str(path),)


def _in_folder(folder: Path) -> Path:
    """The server program of a folder: llama-server, else the single llama program, else (for the message) the
    llama-server that is not there."""
    for name in (EXE_NAME, SINGLE_EXE_NAME):
        if (folder / name).is_file():
            return folder / name
    return folder / EXE_NAME


def common_locations() -> list[Path]:
    home = Path.home()
    places = [home / "llama.cpp" / "build" / "bin", home / "llama.cpp", home / ".local" / "bin",
              Path("/usr/local/bin"), Path("/usr/bin"), Path("/opt/homebrew/bin"), Path("/opt/llama.cpp/bin")]
    if os.name == "nt":
        for var in ("LOCALAPPDATA", "ProgramFiles", "USERPROFILE"):
            base = os.environ.get(var)
            if base:
                places += [Path(base) / "llama.cpp", Path(base) / "llama.cpp" / "bin"]
        places += [Path("C:/llama.cpp"), Path("C:/llama.cpp/bin")]
    return [place / name for place in places for name in (EXE_NAME, SINGLE_EXE_NAME)]


def candidate_paths(user_path: str | None = None) -> list[Path]:
    """Where a llama-server may be, best first: the user's choice, $GGUF_LAUNCHER_LLAMA_SERVER, the one the app
    ships (engine/shipped.py), PATH, usual places."""
    found: list[Path] = []
    for raw in (user_path, os.environ.get("GGUF_LAUNCHER_LLAMA_SERVER")):
        if raw:
            path = Path(raw).expanduser()
            found.append(_in_folder(path) if path.is_dir() else path)
    shipped = shipped_llama_server()
    if shipped is not None:
        found.append(shipped)
    on_path = shutil.which("llama-server")
    if on_path:
        found.append(Path(on_path))
    found += [p for p in common_locations() if p.is_file() and not is_single_program(p)]
    single = shutil.which("llama")
    if single:
        found.append(Path(single))
    found += [p for p in common_locations() if p.is_file() and is_single_program(p)]
    unique: list[Path] = []
    for path in found:
        if path not in unique:
            unique.append(path)
    return unique


def find_llama_server(user_path: str | None = None) -> Path:
    """The llama-server to use, or a UserError saying where we looked and what to do."""
    candidates = candidate_paths(user_path)
    if user_path:
        chosen = candidates[0]
        if not chosen.is_file():
            raise UserError(T("llama-server was not found at {path}.", "在 {path} 找不到 llama-server。",
                              path=str(chosen)),
                            T("Choose the llama-server program file in Settings (Advanced), or use the built-in "
                              "engine.",
                              "请在设置（高级）中选择 llama-server 程序文件，或改用内置引擎。"),
                            action=CHOOSE_SERVER_BIN)
        return chosen
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise UserError(
        T("No llama-server program was found on this computer.", "这台电脑上没有找到 llama-server 程序。"),
        T("Install llama.cpp and choose its llama-server file in Settings (Advanced), or use the built-in engine.",
          "请安装 llama.cpp 并在设置（高级）中选择其中的 llama-server 文件，或改用内置引擎。"),
        (f"looked in: {os.environ.get('PATH', '')}", *dict.fromkeys(str(p.parent) for p in common_locations())),
        action=CHOOSE_SERVER_BIN)


def _run(path: Path, arg: str) -> tuple[int, str]:
    try:
        done = subprocess.run([*server_argv_prefix(path), arg], stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return -1, f"{path} {arg} did not answer within {PROBE_TIMEOUT_S:.0f} s"
    except OSError as error:
        return -1, f"{path}: {error}"
    out = (done.stdout + b"\n" + done.stderr).decode("utf-8", errors="replace")
    return done.returncode, out


def parse_version(text: str) -> tuple[str, int | None, tuple[str, ...]]:
    """(version line, build number or None when unknown/0, compiled backends) from ``--version`` output."""
    line = next((row.strip() for row in text.splitlines() if row.strip().startswith("version:")), "")
    build = None
    match = re.search(r"version:\s*(\d+)\s*\(", line) or re.search(r"\bbuild\s+(\d+)", line)
    if match and int(match.group(1)) > 0:
        build = int(match.group(1))
    backends = ["CPU"] + [name for name, pattern in _BACKEND_PATTERNS.items() if re.search(pattern, text)]
    if not line:
        lines = text.strip().splitlines()
        line = lines[-1] if lines else ""
    return line, build, tuple(backends)


_OPTION = re.compile(r"(-{1,2}[A-Za-z0-9][\w.+-]*)((?: [^\s,]+)*)(,\s*)?")


def _option_names(line: str) -> list[str]:
    """'-fa,   --flash-attn [on|off|auto]   description' -> ['-fa', '--flash-attn']."""
    names, pos = [], 0
    while True:
        match = _OPTION.match(line, pos)
        if not match:
            return names
        names.append(match.group(1))
        if not match.group(3):
            return names
        pos = match.end()


def parse_help_flags(text: str) -> dict[str, str]:
    """Accepted flags from ``--help``: only the option column counts, never flags mentioned in descriptions."""
    flags: dict[str, str] = {}
    current: list[str] = []
    for raw in text.splitlines():
        stripped = raw.strip()
        if raw.startswith("-"):
            current = _option_names(stripped)
            for flag in current:
                flags[flag] = stripped
        elif stripped and current and raw.startswith(" "):
            for flag in current:
                flags[flag] += " " + stripped
        else:
            current = []
    return flags


def _cache_key(path: Path) -> str:
    """Which file this is: a new build copied over the old one differs in mtime, size or inode (os.replace)."""
    stat = path.stat()
    return f"{path.resolve()}|{stat.st_mtime_ns}|{stat.st_size}|{stat.st_ino}"


def _disk_cache_path() -> Path:
    return cache_dir() / "llama-server-facts.json"


def _read_disk_cache() -> dict:
    try:
        data = read_json(_disk_cache_path())
        return data if data.get("version") == CACHE_VERSION else {}
    except FileNotFoundError:
        return {}  # nothing asked yet
    except (OSError, ValueError):  # unreadable or damaged: the binary is asked again
        logger.warning("llama-server facts cache unreadable; asking the binary again", exc_info=True)
        return {}


def _write_disk_cache(key: str, facts: BinaryFacts) -> None:
    from app.core.atomic import write_json_atomic

    data = _read_disk_cache() or {"version": CACHE_VERSION}
    entries = data.setdefault("entries", {})
    entries[key] = asdict(facts)
    try:
        write_json_atomic(_disk_cache_path(), data)
    except OSError:  # a cache only: the facts are still known for this run
        logger.warning("llama-server facts not cached (cache folder not writable)", exc_info=True)


def inspect_llama_server(path: Path) -> BinaryFacts:
    """Run ``--version`` and ``--help`` once per file identity (see ``_cache_key``) and remember what they said."""
    key = _cache_key(path)
    with _lock:
        if key in _memory_cache:
            return _memory_cache[key]
        cached = _read_disk_cache().get("entries", {}).get(key)
        if cached:
            cached["compiled_backends"] = tuple(cached["compiled_backends"])
            facts = _memory_cache[key] = BinaryFacts(**cached)
            return facts
        facts = _probe(path)
        _memory_cache[key] = facts
        _write_disk_cache(key, facts)
        return facts


def _probe(path: Path) -> BinaryFacts:
    code, version_out = _run(path, "--version")
    help_code, help_out = _run(path, "--help")
    flags = parse_help_flags(help_out)
    if code != 0 and not flags:
        raise UserError(
            T("This llama-server could not run: {path}", "这个 llama-server 无法运行：{path}", path=str(path)),
            T("It may be built for another system or miss its libraries. Reinstall llama.cpp or choose another "
              "llama-server, or use the built-in engine.",
              "它可能是为其他系统编译的，或缺少依赖库。请重新安装 llama.cpp、"
              "选择另一个 llama-server，或改用内置引擎。"),
            tuple(version_out.strip().splitlines()[-20:]))
    if "--model" not in flags:  # e.g. /bin/true, or another program chosen by mistake: it would ignore every setting
        raise UserError(
            T("{path} is not llama-server: it does not take a model file.",
              "{path} 不是 llama-server：它不接受模型文件。", path=str(path)),
            T("Choose the llama-server program from llama.cpp in Settings (Advanced), or use the built-in engine.",
              "请在设置（高级）中选择 llama.cpp 的 llama-server 程序，或改用内置引擎。"),
            (f"{path} --help lists no --model option:", *help_out.strip().splitlines()[-5:]),
            action=CHOOSE_SERVER_BIN)
    version_line, build, backends = parse_version(version_out)
    return BinaryFacts(str(path), version_line, build, backends, flags)


def clear_cache() -> None:
    with _lock:
        _memory_cache.clear()

