"""Sentences for failures only Windows produces: a DLL missing or of another version, Smart App Control, a port
Windows reserves, an engine file an antivirus took away. Each says what proves it; see windows_dlls.py for the
DLL evidence and tests/unit/core/diagnosis/test_windows_*.py for the public reports behind each case."""

from __future__ import annotations

import re
from pathlib import Path

from app.core.diagnosis.situation import Situation
from app.core.diagnosis.windows_dlls import VC_REDIST, MissingDlls, missing_dlls
from app.core.launch.ports import reserved_port_range
from app.core.text import T, Text

Parts = tuple[Text, Text, dict, bool]

DLL_NOT_FOUND = 0xC0000135
ENTRY_POINT_NOT_FOUND = 0xC0000139
APP_CONTROL_BLOCKED = 0xC0E90002  # STATUS_SYSTEM_INTEGRITY_POLICY_VIOLATION; Win32 error 4551 (HRESULT 0x800711C7)

VC_RUNTIME_STEP = T(
    "Install Microsoft's Visual C++ Redistributable: the file {file} from Microsoft's page \"Latest supported Visual "
    "C++ Redistributable downloads\" (learn.microsoft.com), then start again.",
    "安装微软的 Visual C++ 运行库：从微软的“Latest supported Visual C++ Redistributable downloads”页面"
    "（learn.microsoft.com）下载 {file} 并安装，然后重新启动。", file=VC_REDIST)

DEFENDER_STEPS = T(
    "If Windows Security removed it (llama.cpp builds are often reported as Trojan:Win32/Wacatac…!ml, a false alarm), "
    "open Windows Security → Virus & threat protection → Protection history, choose the entry for the file, then "
    "Actions → Restore (or Allow on device); otherwise download the same llama.cpp build again and unpack all of it "
    "into one folder.",
    "如果是 Windows 安全中心删除了它（llama.cpp 的程序常被误报为 Trojan:Win32/Wacatac…!ml），请打开 "
    "Windows 安全中心 → 病毒和威胁防护 → 保护历史记录，选中该文件的记录，然后点“操作”→“还原”（或“在设备上允许”）；"
    "否则请重新下载同一版本的 llama.cpp，并把全部文件解压到同一个文件夹。")


def engine_program(s: Situation) -> Path | None:
    """The external llama-server this server ran, when the caller or the settings name it (the built-in engine's
    program is Python)."""
    program = s.engine.program or getattr(s.config, "server_bin", None)
    if s.backend != "llama-server" or not program:
        return None
    return Path(str(program))


def _switch_to_builtin(s: Situation) -> dict:
    return {"backend": "embedded"} if s.backend == "llama-server" else {}


def dll_evidence(s: Situation) -> MissingDlls | None:
    """What the program's import tables say is missing, for a 0xC0000135 exit of an external llama-server whose
    path is known; None when there is nothing to read."""
    program = engine_program(s)
    if s.status.exit_code != DLL_NOT_FOUND or program is None or s.group("lib"):
        return None
    evidence = missing_dlls(program)
    return evidence if evidence.checked else None


def refined_cause(cause: str, s: Situation) -> str:
    """A 0xC0000135 exit ("missing_library") becomes the cause the engine folder proves, when it proves one; a bind
    failure on a port nobody uses becomes "port_reserved" when Windows lists the port as reserved."""
    if cause == "port_in_use":
        return "port_reserved" if _reserved_range(s) is not None else cause
    if cause != "missing_library":
        return cause
    evidence = dll_evidence(s)
    if evidence is None:
        return cause
    if evidence.engine:
        return "engine_files_missing"
    if evidence.vc_runtime:
        return "vc_runtime_missing"
    return cause


def dll_not_found(s: Situation) -> Parts:
    """0xC0000135 with no file named anywhere: which DLL is unknown. When the folder was read and every engine file
    is there, the engine's own files are ruled out and the Visual C++ runtime is what is left to install."""
    evidence = dll_evidence(s)
    program = engine_program(s)
    if evidence is not None and program is not None and evidence.other:
        return _other_dlls_missing(s, program, evidence.other)
    if evidence is not None and program is not None:
        message = T("Windows could not start {program}: a DLL it needs is missing, although every llama.cpp file it "
                    "needs is in its folder (0xC0000135).",
                    "Windows 无法启动 {program}：缺少它需要的某个 DLL，尽管它需要的 llama.cpp 文件都在它的文件夹里"
                    "（0xC0000135）。", program=program.name)
        return message, VC_RUNTIME_STEP, {}, False
    message = T("Windows could not start the server: a DLL it needs is missing (0xC0000135).",
                "Windows 无法启动服务器：缺少它需要的某个 DLL（0xC0000135）。")
    step = T("Install Microsoft's Visual C++ Redistributable ({file}, from Microsoft's page \"Latest supported "
             "Visual C++ Redistributable downloads\"); if it still fails, download llama.cpp again and keep all of its "
             "files together in one folder.",
             "安装微软的 Visual C++ 运行库（{file}，在微软的“Latest supported Visual C++ Redistributable downloads”"
             "页面）；如果仍然失败，请重新下载 llama.cpp，并把它的所有文件放在同一个文件夹里。", file=VC_REDIST)
    return message, step, _switch_to_builtin(s), False


_CUDA_DLL = re.compile(r"^(?:cudart|cublas|cublasLt|nvrtc|cufft|curand|cusparse)\d*_?\d*\.dll$", re.IGNORECASE)


def _other_dlls_missing(s: Situation, program: Path, names: tuple[str, ...]) -> Parts:
    """DLLs the engine imports that are neither beside it, in Windows' system folder nor on PATH (proved by the
    search; Windows only): the CUDA runtime archive not unpacked beside a CUDA build, or a library a build forgot."""
    message = T("Windows could not start {program}: {files} is neither beside it, in Windows' system folder nor on "
                "PATH (0xC0000135).",
                "Windows 无法启动 {program}：{files} 既不在它旁边，也不在 Windows 系统文件夹或 PATH 中（0xC0000135）。",
                program=program.name, files=", ".join(names))
    if any(_CUDA_DLL.match(name) for name in names):
        step = T("Unpack the CUDA runtime archive of the same llama.cpp release (cudart-llama-bin-win-cuda-…-x64.zip) "
                 "into the folder of {program}, or use a CPU or Vulkan build.",
                 "把同一 llama.cpp 版本的 CUDA 运行库压缩包（cudart-llama-bin-win-cuda-…-x64.zip）解压到 {program} "
                 "所在的文件夹，或改用 CPU 或 Vulkan 版本。", program=program.name)
    else:
        step = T("Put the missing DLL beside {program} (the build that needs it should ship it), or use an official "
                 "llama.cpp release build.",
                 "把缺少的 DLL 放到 {program} 旁边（需要它的版本本应自带），或改用官方发布的 llama.cpp 版本。",
                 program=program.name)
    return message, step, _switch_to_builtin(s), False


def engine_files_missing(s: Situation) -> Parts:
    evidence = dll_evidence(s)
    program = engine_program(s)
    files = ", ".join(evidence.engine) if evidence else "?"
    return (T("{program} cannot start because {files}, which it needs, is not in its folder {folder}.",
              "{program} 无法启动，因为它需要的 {files} 不在它的文件夹 {folder} 中。",
              program=program.name if program else "llama-server", files=files,
              folder=str(program.parent) if program else "?"),
            DEFENDER_STEPS, _switch_to_builtin(s), False)


def vc_runtime_missing(s: Situation) -> Parts:
    evidence = dll_evidence(s)
    files = ", ".join(evidence.vc_runtime) if evidence else "MSVCP140.dll"
    return (T("The Microsoft Visual C++ runtime that llama.cpp needs is not installed on this computer ({files}: "
              "not beside the program, not in Windows' system folder).",
              "这台电脑没有安装 llama.cpp 需要的微软 Visual C++ 运行库"
              "（{files}：不在程序旁边，也不在 Windows 系统文件夹里）。",
              files=files),
            VC_RUNTIME_STEP, {}, False)


def dll_version(s: Situation) -> Parts:
    """0xC0000139 / "entry point not found" / WinError 127: a DLL was found but is not the version the program was
    built against."""
    lib = s.group("lib")
    named = f" ({lib})" if lib else ""
    return (T("Windows stopped the server because a DLL it loaded{named} is another version than the one it was built "
              "with (0xC0000139).",
              "Windows 停止了服务器，因为它加载的某个 DLL{named} 与构建时使用的版本不同（0xC0000139）。", named=named),
            T("This happens when files of two llama.cpp versions are mixed or an older copy is found first: unpack one "
              "llama.cpp release into an empty folder, choose its llama-server, and remove other llama.cpp folders "
              "from PATH.",
              "两个 llama.cpp 版本的文件混在一起，或者先找到了旧的副本时会这样："
              "把同一个 llama.cpp 版本解压到一个空文件夹，"
              "选择其中的 llama-server，并从 PATH 中移除其他 llama.cpp 文件夹。"),
            _switch_to_builtin(s), False)


def app_control_blocked(s: Situation) -> Parts:
    """Smart App Control (or an App Control policy) refused an unsigned DLL or Python extension."""
    blocked = s.group("file")
    named = f" ({Path(blocked).name})" if blocked else ""
    return (T("Windows Smart App Control blocked a file of the engine{named} because it is not signed, so the server "
              "could not start; Smart App Control has no exception for a single app.",
              "Windows 智能应用控制阻止了引擎的一个文件{named}，因为它没有数字签名，所以服务器无法启动；"
              "智能应用控制不能为单个程序设置例外。", named=named),
            T("Use an engine whose files are signed, or turn Smart App Control off (Windows Security → App & browser "
              "control → Smart App Control settings); on some Windows versions it cannot be turned on again without "
              "reinstalling Windows.",
              "改用文件带有数字签名的引擎，或关闭智能应用控制"
              "（Windows 安全中心 → 应用和浏览器控制 → 智能应用控制设置）；"
              "在某些 Windows 版本上，关闭后只有重装 Windows 才能再次打开。"),
            {}, False)


def _port(s: Situation) -> str:
    # "port: 1258", "('127.0.0.1', 1258)", "127.0.0.1:11435", "tcp :1258" — not a time of day ("21:46:31")
    match = re.search(r"port:?\s*(\d{1,5})|', (\d{1,5})\)|(?:\d+\.\d+\.\d+\.\d+|\]|localhost|\s):(\d{1,5})\b",
                      s.hit.line) if s.hit else None
    port = next((group for group in match.groups() if group), None) if match else None
    return port or str(getattr(s.config, "port", None) or s.facts.port or "?")


def _reserved_range(s: Situation) -> tuple[int, int] | None:
    port = _port(s)
    return reserved_port_range(int(port)) if port.isdigit() else None


def port_reserved(s: Situation) -> Parts:
    """WSAEACCES (10013) on bind, or a bind failure on a port Windows lists as reserved: the port is in a range
    Windows excludes (Hyper-V, WSL, Docker), not in use."""
    port = _port(s)
    reserved = _reserved_range(s)
    if reserved is not None:
        return (T("Windows reserves ports {start}–{end} (port {port} among them) for its own use, so no program may "
                  "listen there, although none uses them.",
                  "Windows 保留了端口 {start}–{end}（包括端口 {port}）供自己使用，任何程序都不能在那里监听，"
                  "尽管没有程序在用。", start=reserved[0], end=reserved[1], port=port),
                T("Let the app pick a free port and restart.", "让程序自动选择一个空闲端口，然后重新启动。"),
                {"port": 0}, False)
    return (T("Windows does not let any program listen on port {port} (a range it reserves, e.g. for Hyper-V, WSL or "
              "Docker), although no program uses it.",
              "Windows 不允许任何程序在端口 {port} 上监听（这是它保留的端口范围，例如给 Hyper-V、WSL 或 Docker），"
              "尽管没有程序在使用它。", port=port),
            T("Let the app pick a free port and restart.", "让程序自动选择一个空闲端口，然后重新启动。"),
            {"port": 0}, False)


BUILDERS = {
    "engine_files_missing": engine_files_missing, "vc_runtime_missing": vc_runtime_missing,
    "dll_version": dll_version, "app_control_blocked": app_control_blocked, "port_reserved": port_reserved,
}


_ENGINE_FILE = re.compile(r"^(?:llama|ggml|mtmd)[\w.-]*\.(?:dll|exe|so|dylib)$", re.IGNORECASE)


def _engine_files_beside(folder: Path) -> list[str]:
    try:
        return sorted(entry.name for entry in folder.iterdir() if _ENGINE_FILE.match(entry.name))
    except OSError:
        return []


def engine_gone(exc: BaseException, program: str) -> Text | None:
    """The engine program could not be started because it vanished from a folder that still holds the rest of
    llama.cpp, or Windows denied access to it (WinError 5): what an antivirus that quarantines it leaves behind.
    None when the evidence is not there (a wrong path, a folder without llama.cpp, another error)."""
    path = Path(program)
    if not path.is_absolute():
        return None
    winerror = getattr(exc, "winerror", None)
    if isinstance(exc, PermissionError) and (winerror == 5 or "Access is denied" in str(exc)) and path.is_file():
        return T("Windows refused to run {program}: access is denied. An antivirus that is holding or has "
                 "quarantined the file does this; Windows Security reports llama.cpp builds as "
                 "Trojan:Win32/Wacatac…!ml, a false alarm.",
                 "Windows 拒绝运行 {program}：拒绝访问。杀毒软件正在扫描或已隔离该文件时会这样；"
                 "Windows 安全中心会把 llama.cpp 的程序误报为 Trojan:Win32/Wacatac…!ml。", program=path.name)
    if isinstance(exc, FileNotFoundError) and not path.exists():
        rest = [name for name in _engine_files_beside(path.parent) if name.lower() != path.name.lower()]
        if rest:
            return T("{program} is not in {folder}, although the rest of llama.cpp ({files}) is there.",
                     "{program} 不在 {folder} 中，而 llama.cpp 的其余文件（{files}）都在那里。",
                     program=path.name, folder=str(path.parent), files=", ".join(rest[:4]))
    return None
