"""Sentences for network, option, driver, library and crash problems, and for exits nothing explains."""

from __future__ import annotations

import logging
import re

from app.core.diagnosis import causes_windows
from app.core.diagnosis.fixes import drop_extra_argument
from app.core.diagnosis.port_owner import port_owner
from app.core.diagnosis.situation import Situation
from app.core.text import T, Text

log = logging.getLogger(__name__)
Parts = tuple[Text, Text, dict, bool]

BUILTIN = "embedded"
REBUILD_ENGINE = "rebuild_engine"  # a fix key that is no setting: the app rebuilds that engine, then restarts


def _switch_to_builtin(s: Situation) -> dict:
    return {"backend": BUILTIN} if s.backend == "llama-server" else {}


def port_in_use(s: Situation) -> Parts:
    port = _port(s)
    owner = port_owner(int(port)) if port.isdigit() else None
    if owner is not None:
        message = T("Port {port} is already used by {name} (process {pid}), "
                    "perhaps an earlier server that is still running.",
                    "端口 {port} 已被 {name}（进程 {pid}）占用，可能是之前的服务器仍在运行。",
                    port=port, name=owner[1], pid=owner[0])
    else:
        message = T("Port {port} is already used by another program (maybe an earlier server that is still running).",
                    "端口 {port} 已被其他程序占用（可能是之前的服务器仍在运行）。", port=port)
    return (message,
            T("Let the app pick a free port and restart.", "让程序自动选择一个空闲端口，然后重新启动。"),
            {"port": 0}, False)


def _port(s: Situation) -> str:
    if s.hit is not None:
        match = re.search(r"port:?\s*(\d{1,5})|', (\d{1,5})\)", s.hit.line)
        if match:
            return match.group(1) or match.group(2)
    port = getattr(s.config, "port", None) or s.facts.port
    return str(port) if port else "?"


def host_unavailable(s: Situation) -> Parts:
    logged = re.search(r"\('([^']+)', \d+\)|hostname: ([^,\s]+)", s.hit.line) if s.hit else None
    host = (logged.group(1) or logged.group(2)) if logged else (getattr(s.config, "host", None) or "?")
    return (T("The server cannot listen on the address {host}: it does not belong to this computer.",
              "服务器无法在地址 {host} 上监听：该地址不属于这台电脑。", host=host),
            T("Listen on 127.0.0.1 (this computer only) and restart.", "改为监听 127.0.0.1（仅本机），然后重新启动。"),
            {"host": "127.0.0.1"}, False)


def bad_argument(s: Situation) -> Parts:
    arg = s.group("arg")
    fix = drop_extra_argument(s.config, arg) or {}
    if arg:
        message = T("The server program did not accept the option {arg}.", "服务器程序不接受参数 {arg}。", arg=arg)
    else:
        message = T("The server program rejected its command-line options.", "服务器程序拒绝了它的命令行参数。")
    if fix:
        hint = T("Remove {arg} from the extra arguments and restart.", "从附加参数中删除 {arg}，然后重新启动。",
                 arg=arg)
    else:
        hint = T("Update llama.cpp, or remove the option from the extra arguments; "
                 "the copied command line shows what was passed.",
                 "更新 llama.cpp，或从附加参数中删除该选项；复制的命令行里可以看到实际传入的参数。")
    return message, hint, fix, False


def context_rejected(s: Situation) -> Parts:
    """llama.cpp refused to set up the context for a reason that is not memory (a memory line would rank higher)."""
    reason = (s.group("reason") or "").strip()[:200]
    if reason:
        return (T("llama.cpp could not set up the context with these settings: {reason}",
                  "llama.cpp 无法用当前设置建立上下文：{reason}", reason=reason),
                T("Change the setting it names (in the settings or the extra arguments) and restart.",
                  "修改它提到的设置（在设置中或附加参数里），然后重新启动。"), {}, False)
    return (T("llama.cpp could not set up the context (the conversation memory) with these settings, and its log "
              "does not say why.",
              "llama.cpp 无法用当前设置建立上下文（对话缓存），日志中也没有说明原因。"),
            T("Undo the last change to the settings or the extra arguments and restart; the log lines below show what "
              "it printed.",
              "撤销最近对设置或附加参数的修改后重新启动；下面的日志行显示了它的输出。"), {}, False)


def gpu_driver_problem(s: Situation) -> Parts:
    return (T("The graphics card could not be used: its driver is missing, too old, "
              "or does not match this llama.cpp build.",
              "无法使用显卡：显卡驱动缺失、版本过旧，或与当前 llama.cpp 版本不匹配。"),
            T("Update the graphics driver, or run on the processor only (0 GPU layers) and restart.",
              "更新显卡驱动，或改为只用 CPU 运行（GPU 层数设为 0），然后重新启动。"), {"gpu_layers": 0}, False)


def gpu_error(s: Situation) -> Parts:
    return (T("The graphics card reported an error and the server stopped.", "显卡报告了错误，服务器已停止。"),
            T("Restart. If it happens again, update the graphics driver or put fewer layers on the graphics card.",
              "重新启动。如果再次发生，请更新显卡驱动或减少放到显卡上的层数。"), {}, True)


def missing_library(s: Situation) -> Parts:
    lib = s.group("lib")
    if not lib and s.status.exit_code == causes_windows.DLL_NOT_FOUND:
        return causes_windows.dll_not_found(s)  # Windows named no file: what the engine folder rules out
    if lib or s.status.exit_code == 0xC0000135:
        message = T("A library the server needs is missing: {lib}.", "缺少服务器需要的库：{lib}。", lib=lib or "a DLL")
    else:  # 0xC0000142: a DLL was found but failed to initialise; its meaning says so
        message = s.status.meaning
    if re.search(r"cu(da|blas|dnn)|nvidia", lib or "", re.IGNORECASE):
        hint = T("Install the NVIDIA graphics driver and the CUDA runtime this llama.cpp build needs, "
                 "or use a CPU-only build.",
                 "安装 NVIDIA 显卡驱动和该 llama.cpp 版本所需的 CUDA 运行库，或改用仅 CPU 的版本。")
    else:
        hint = T("Reinstall llama.cpp (or this app) so that all of its files are present.",
                 "重新安装 llama.cpp（或本程序），确保所有文件齐全。")
    return message, _or_builtin(s, hint), _switch_to_builtin(s), False


def _or_builtin(s: Situation, hint: Text) -> Text:
    """Offer the built-in server as a way out only when an external llama-server is in use."""
    if s.backend != "llama-server":
        return hint
    return Text(hint.render("en").rstrip(".") + "; or switch to the built-in server.",
                hint.render("zh").rstrip("。") + "；或者改用内置服务器。")


def library_incompatible(s: Situation) -> Parts:
    return (T("The server program was built for a different system than this one (library {lib}).",
              "服务器程序是为其他系统构建的，与本机不兼容（库 {lib}）。", lib=s.group("lib") or "?"),
            _or_builtin(s, T("Install a llama.cpp build made for this system.", "安装为本系统构建的 llama.cpp。")),
            _switch_to_builtin(s), False)


def illegal_instruction(s: Situation) -> Parts:
    """SIGILL. The engine's own system_info line says what it was compiled for; the instruction-set probe (whose
    answer the caller passes in ``s.engine``) says what runs here. Where they disagree, name the extension and offer
    the fix that works (rebuild, other engine)."""
    faulting, missing = _compiled_but_unusable(s)
    if faulting or missing:
        return _unusable_features(s, faulting, missing)
    if s.backend != "llama-server" and s.engine.builtin_built_here:
        return (T("The built-in engine stopped on an instruction this processor cannot run, although it was built "
                  "on this computer.", "内置引擎遇到这台处理器无法运行的指令而停止，尽管它是在这台电脑上构建的。"),
                _rebuild_hint(), {REBUILD_ENGINE: BUILTIN}, False)
    return (T("The server program needs a processor feature (such as AVX2 or AVX-512) that this CPU does not have.",
              "服务器程序需要这颗 CPU 不具备的指令集（例如 AVX2 或 AVX-512）。"),
            _or_builtin(s, T("Install a llama.cpp build for older processors (without AVX2/AVX-512), "
                             "or rebuild it on this computer.",
                             "安装适用于较旧处理器的 llama.cpp 版本（不含 AVX2/AVX-512），或在这台电脑上重新编译。")),
            _switch_to_builtin(s), False)


def _compiled_but_unusable(s: Situation) -> tuple[list[str], list[str]]:
    """Of the extensions the engine was compiled to use (its system_info line): the names of those advertised here
    but faulting, and of those not even advertised here."""
    flags = s.facts.cpu_features or ()
    return ([s.engine.faulting[flag] for flag in flags if flag in s.engine.faulting],
            [s.engine.missing[flag] for flag in flags if flag in s.engine.missing])


def _rebuild_hint() -> Text:
    return T("Rebuild the built-in engine for this processor (a few minutes; the processor is tested first); "
             "it then starts again.",
             "为这台处理器重新构建内置引擎（需要几分钟，会先测试处理器），之后会自动重新启动。")


def _unusable_features(s: Situation, faulting: list[str], missing: list[str]) -> Parts:
    names = ", ".join(dict.fromkeys(faulting + missing))
    if faulting:
        message = T("The engine was built to use {features}, which this processor advertises but cannot run here "
                    "(common in virtual machines), so it stopped at the first calculation.",
                    "引擎构建时使用了 {features}：这台处理器声称支持它，但在这里无法运行（虚拟机中常见），"
                    "因此在第一次计算时就停止了。",
                    features=names)
    else:
        message = T("The engine was built for processors with {features}; this one does not have it, so it stopped "
                    "at the first calculation.",
                    "引擎是为具有 {features} 的处理器构建的；这台处理器没有，因此在第一次计算时就停止了。",
                    features=names)
    if s.backend == "llama-server":
        return (message, T("Use the built-in engine, or a llama-server built without {features}.",
                           "改用内置引擎，或使用不含 {features} 的 llama-server。", features=names),
                _switch_to_builtin(s), False)
    return message, _rebuild_hint(), {REBUILD_ENGINE: BUILTIN}, False


def assertion_failed(s: Situation) -> Parts:
    return (T("llama.cpp stopped on a failed internal check.", "llama.cpp 内部检查失败而停止。"),
            T("Update llama.cpp. If it keeps happening with these settings, "
              "try a smaller context or another model file.",
              "更新 llama.cpp。如果在当前设置下反复出现，请尝试更小的上下文或换一个模型文件。"),
            {}, s.was_ready is not False)


def python_error(s: Situation) -> Parts:
    """The error's own words, not its class name (the whole line is the evidence's first line)."""
    words = (s.group("msg") or "")[:300]
    message = (T("The built-in server stopped with an error: {error}", "内置服务器因错误而停止：{error}", error=words)
               if words else T("The built-in server stopped with an error.", "内置服务器因错误而停止。"))
    return (message,
            T("Restart. If it happens again, the log lines below show where it failed.",
              "重新启动。如果再次发生，下面的日志行显示了出错的位置。"), {}, s.was_ready is not False)


def crashed(s: Situation) -> Parts:
    """Segfault, abort or Windows fail-fast with nothing in the log to explain it. The graphics card is named in
    the next step only when the settings put layers on one."""
    if getattr(s.config, "gpu_layers", None) == 0:
        hint = T("Restart. If it happens again, update llama.cpp (or this app) or try another model file; the log "
                 "lines below show where it stopped.",
                 "重新启动。如果再次发生，请更新 llama.cpp（或本程序），或换一个模型文件；"
                 "下面的日志行显示了它停在哪里。")
    else:
        hint = T("Restart. If it happens again, close other programs that use the graphics card, "
                 "put fewer layers on it, or update llama.cpp and the graphics driver.",
                 "重新启动。如果再次发生，请关闭其他占用显卡的程序、减少放到显卡上的层数，"
                 "或更新 llama.cpp 和显卡驱动。")
    return s.status.meaning, hint, {}, s.was_ready is not False


def bus_error(s: Situation) -> Parts:
    fix = {"load_mode": "none"} if getattr(s.config, "load_mode", None) != "none" else {}
    return (T("The server lost access to the model file while reading it "
              "(was it moved, changed, or on a removed drive?).",
              "服务器读取模型文件时失去了访问（文件是否被移动、修改，或所在磁盘已被移除？）。"),
            T("Keep the model on a local disk and do not change it while the server runs; "
              "turning off memory-mapping also helps.",
              "把模型放在本地磁盘上，运行期间不要改动它；关闭内存映射也会有帮助。"), fix, True)


def stopped_externally(s: Situation) -> Parts:
    return (T("The server was stopped by another program or by the system.", "服务器被其他程序或系统停止了。"),
            T("Start it again.", "重新启动即可。"), {}, True)


def exited_early(s: Situation) -> Parts:
    if s.was_ready is False:  # gone before it ever answered: no log of serving, so restarting blindly may loop
        return (T("The server exited with exit code 0 before it answered its first health check, without reporting "
                  "an error.",
                  "服务器在回应第一次健康检查之前就以退出码 0 退出了，没有报告错误。"),
                T("Start it again; if it exits again, run the copied command line in a terminal to see what it "
                  "prints.",
                  "重新启动；如果再次退出，请在终端中运行复制的命令行，看看它输出了什么。"),
                {}, True)
    return (T("The server exited by itself without reporting an error.", "服务器自行退出，没有报告错误。"),
            T("Start it again; if it keeps exiting, the log lines below may show why.",
              "重新启动；如果仍然退出，下面的日志行可能说明原因。"),
            {}, True)


def unknown(s: Situation) -> Parts:
    return (s.status.meaning,
            T("Restart. If it happens again, share the log lines below and the copied command line "
              "when asking for help.",
              "重新启动。如果再次发生，求助时请附上下面的日志行和复制的命令行。"), {}, s.was_ready is not False)


BUILDERS = {
    "port_in_use": port_in_use, "host_unavailable": host_unavailable, "bad_argument": bad_argument,
    "context_rejected": context_rejected,
    "gpu_driver_problem": gpu_driver_problem, "gpu_error": gpu_error, "missing_library": missing_library,
    "library_incompatible": library_incompatible, "illegal_instruction": illegal_instruction,
    "assertion_failed": assertion_failed, "python_error": python_error, "crashed": crashed, "bus_error": bus_error,
    "stopped_externally": stopped_externally, "exited_early": exited_early, "unknown": unknown,
}
