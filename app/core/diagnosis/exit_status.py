"""Turn an exit status, in any spelling a launcher or OS prints it, into plain words.

Forms handled: Python's negative signal numbers (-9), a shell's 128+N (137), plain exit codes (1, 2),
and Windows NTSTATUS values as unsigned (3221226505), signed (-1073740791), hex ("0xC0000409") or
sign-extended to 64 bits and float-rounded the way LM Studio prints them (18446744072635812000).
"""

from __future__ import annotations

import re
import signal as _signal
from typing import NamedTuple

from app.core.text import T, Text

_U32 = 1 << 32
_U64 = 1 << 64
# A double has 53 bits of mantissa: around 2**64 neighbouring values are 2048 apart, and printing with
# 17 significant digits loses a little more. Anything this close to a known status is that status.
_FLOAT_TOLERANCE = 4096


class ExitStatus(NamedTuple):
    exit_code: int | None  # normalised: NTSTATUS as unsigned 32-bit, POSIX as given (-9, 137, 1)
    signal: str | None  # "SIGKILL", or None when no signal was involved
    meaning: Text


# Signal names by Linux number; used when the running platform does not know a number.
_LINUX_SIGNALS = {
    1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS",
    8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE",
    14: "SIGALRM", 15: "SIGTERM", 24: "SIGXCPU", 25: "SIGXFSZ",
}

_SIGNAL_MEANINGS: dict[str, Text] = {
    "SIGKILL": T(
        "The server was killed by force (SIGKILL). The system does this when the computer runs out of memory.",
        "服务器被强制结束（SIGKILL）。电脑内存耗尽时，系统会这样结束进程。",
    ),
    "SIGSEGV": T(
        "The server crashed while touching memory it may not use (segmentation fault, SIGSEGV).",
        "服务器访问了不允许访问的内存而崩溃（段错误，SIGSEGV）。",
    ),
    "SIGABRT": T(
        "The server stopped itself after an internal error (abort, SIGABRT). llama.cpp does this on GPU errors.",
        "服务器在内部出错后主动中止（SIGABRT）。llama.cpp 遇到显卡错误时会这样退出。",
    ),
    "SIGILL": T(
        "The server used a processor instruction this CPU does not have (illegal instruction, SIGILL).",
        "服务器使用了这颗 CPU 不支持的指令（非法指令，SIGILL）。",
    ),
    "SIGBUS": T(
        "The server lost access to mapped file data (bus error, SIGBUS), often because the model file changed.",
        "服务器无法读取映射的文件数据（总线错误，SIGBUS），通常是模型文件被改动或被截断。",
    ),
    "SIGFPE": T(
        "The server crashed on an arithmetic error (SIGFPE).",
        "服务器因算术错误而崩溃（SIGFPE）。",
    ),
    "SIGTERM": T(
        "The server was asked to stop (SIGTERM) by another program.",
        "服务器被其他程序要求停止（SIGTERM）。",
    ),
    "SIGINT": T("The server was interrupted (SIGINT, like Ctrl+C).", "服务器被中断（SIGINT，相当于按下 Ctrl+C）。"),
    "SIGHUP": T("The server's terminal went away (SIGHUP).", "服务器所在的终端被关闭（SIGHUP）。"),
    "SIGPIPE": T("The server's output pipe was closed (SIGPIPE).", "服务器的输出管道被关闭（SIGPIPE）。"),
}

_NTSTATUS: dict[int, Text] = {
    0xC0000409: T(
        "The server stopped itself after an internal error (Windows fail-fast / stack buffer overrun, 0xC0000409). "
        "llama.cpp ends this way on GPU errors and failed checks.",
        "服务器在内部出错后主动中止（Windows 快速失败 / 栈缓冲区溢出，0xC0000409）。llama.cpp 遇到显卡错误或检查失败时会这样退出。",
    ),
    0xC0000005: T(
        "The server crashed while touching memory it may not use (Windows access violation, 0xC0000005).",
        "服务器访问了不允许访问的内存而崩溃（Windows 访问冲突，0xC0000005）。",
    ),
    0xC0000135: T(
        "The server could not start because a DLL it needs is missing (0xC0000135).",
        "服务器无法启动，因为缺少它需要的 DLL 文件（0xC0000135）。",
    ),
    0xC000007B: T(
        "The server could not start because a DLL is the wrong kind, e.g. 32-bit instead of 64-bit (0xC000007B).",
        "服务器无法启动，因为某个 DLL 类型不对，例如 32 位而不是 64 位（0xC000007B）。",
    ),
    0xC0000142: T(
        "The server could not start because a DLL failed to initialise (0xC0000142).",
        "服务器无法启动，因为某个 DLL 初始化失败（0xC0000142）。",
    ),
    0xC000001D: T(
        "The server used a processor instruction this CPU does not have (Windows illegal instruction, 0xC000001D).",
        "服务器使用了这颗 CPU 不支持的指令（Windows 非法指令，0xC000001D）。",
    ),
    0xC0000017: T(
        "The server ran out of memory (Windows no memory, 0xC0000017).",
        "服务器内存不足（Windows 内存不足，0xC0000017）。",
    ),
    0xC00000FD: T(
        "The server crashed because its stack overflowed (0xC00000FD).",
        "服务器因栈溢出而崩溃（0xC00000FD）。",
    ),
    0xC0000374: T(
        "The server crashed because its memory bookkeeping was corrupted (Windows heap corruption, 0xC0000374).",
        "服务器因内存管理数据被破坏而崩溃（Windows 堆损坏，0xC0000374）。",
    ),
    0xC000013A: T(
        "The server was interrupted (Ctrl+C or the console closed, 0xC000013A).",
        "服务器被中断（按下 Ctrl+C 或控制台被关闭，0xC000013A）。",
    ),
    0xC0000094: T(
        "The server crashed on a division by zero (0xC0000094).",
        "服务器因除以零而崩溃（0xC0000094）。",
    ),
    0xC0000006: T(
        "The server could not read part of a mapped file, often a model on a removed or network drive (0xC0000006).",
        "服务器无法读取映射文件的一部分，常见于模型放在已拔出或网络驱动器上（0xC0000006）。",
    ),
    0xE06D7363: T(
        "The server stopped on an unhandled C++ exception (0xE06D7363).",
        "服务器因未处理的 C++ 异常而停止（0xE06D7363）。",
    ),
    0x80000003: T(
        "The server hit a debug breakpoint and stopped (0x80000003).",
        "服务器触发了调试断点并停止（0x80000003）。",
    ),
}

# Which POSIX signal an NTSTATUS corresponds to, so one set of rules covers both systems.
NTSTATUS_AS_SIGNAL = {
    0xC0000409: "SIGABRT", 0xC0000005: "SIGSEGV", 0xC000001D: "SIGILL", 0xC0000374: "SIGSEGV",
    0xC00000FD: "SIGSEGV", 0xC0000094: "SIGFPE", 0xE06D7363: "SIGABRT", 0xC0000006: "SIGBUS",
}

_EXIT_MEANINGS: dict[int, Text] = {
    0: T("The server exited by itself without reporting an error (exit code 0).", "服务器自行退出，没有报告错误（退出码 0）。"),
    1: T(
        "The server reported an error and exited (exit code 1): usually the model could not be loaded, "
        "the port was busy or an option was rejected.",
        "服务器报告错误后退出（退出码 1）：通常是模型无法加载、端口被占用或某个参数被拒绝。",
    ),
    2: T(
        "The server exited with exit code 2: usually a command-line option it did not accept, "
        "or a model it could not load.",
        "服务器以退出码 2 退出：通常是它不接受某个命令行参数，或无法加载模型。",
    ),
    3: T(
        "The server failed while starting up (exit code 3), often because its network port could not be opened.",
        "服务器在启动过程中失败（退出码 3），常见原因是无法打开网络端口。",
    ),
    126: T("The server program exists but could not be run (exit code 126).", "服务器程序存在但无法运行（退出码 126）。"),
    127: T(
        "The server program or a library it needs was not found (exit code 127).",
        "找不到服务器程序或它需要的库（退出码 127）。",
    ),
}


def _signal_name(number: int) -> str:
    try:
        return _signal.Signals(number).name
    except (ValueError, AttributeError):
        return _LINUX_SIGNALS.get(number, f"signal {number}")


def _signal_meaning(name: str) -> Text:
    return _SIGNAL_MEANINGS.get(
        name, T("The server was stopped by {signal}.", "服务器被信号 {signal} 结束。", signal=name)
    )


def _nearest_ntstatus(value: int) -> int | None:
    """A sign-extended 64-bit NTSTATUS, possibly float-rounded, back to its 32-bit value."""
    for status in _NTSTATUS:
        if abs(value - (_U64 - _U32 + status)) <= _FLOAT_TOLERANCE:
            return status
    if _U64 - _U32 <= value < _U64:
        return value - (_U64 - _U32)
    return None


def parse_exit_code(code: int | float | str | None) -> int | None:
    """Any spelling to an int: "0xc0000409", "exit status 0xc0000409", "-1073740791", 1.8446744072635812e19."""
    if code is None or isinstance(code, bool):
        return None
    if isinstance(code, int):
        return code
    if isinstance(code, float):
        return int(code) if code == code and abs(code) != float("inf") else None
    text = str(code).strip()
    match = re.search(r"0x[0-9a-fA-F]+", text)
    if match:
        return int(match.group(0), 16)
    match = re.search(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", text)
    if not match:
        return None
    number = match.group(0)
    return int(number) if re.fullmatch(r"[-+]?\d+", number) else int(float(number))


def normalize_windows_status(code: int) -> int | None:
    """The unsigned 32-bit NTSTATUS when ``code`` is one in any spelling, else None."""
    if code >= _U32:
        return _nearest_ntstatus(code)
    if code < -(1 << 31) or code >= _U32:
        return None
    if -255 <= code <= 255:
        return None
    unsigned = code % _U32
    if unsigned in _NTSTATUS or 0xC0000000 <= unsigned < 0xFFFFFF00:
        return unsigned
    return None


def decode_exit_status(code: int | float | str | None) -> ExitStatus:
    """(normalised exit code, signal name or None, plain meaning) for any exit status spelling."""
    number = parse_exit_code(code)
    if number is None:
        return ExitStatus(None, None, T("The server stopped; its exit status is unknown.", "服务器已停止，退出状态未知。"))
    ntstatus = normalize_windows_status(number)
    if ntstatus is not None:
        return _decode_ntstatus(ntstatus)
    if 0xFFFFFF00 <= number < _U32:  # exit(-1) etc. as Windows reports it: unsigned, not a signal
        signed = number - _U32
        return ExitStatus(signed, None, T("The server exited with error code {code}.", "服务器以错误码 {code} 退出。", code=signed))
    if -65 < number < 0:
        name = _signal_name(-number)
        return ExitStatus(number, name, _signal_meaning(name))
    if 128 < number < 128 + 65:
        name = _signal_name(number - 128)
        return ExitStatus(number, name, _signal_meaning(name))
    meaning = _EXIT_MEANINGS.get(number) or T(  # includes negative exit codes that are no signal
        "The server exited with error code {code}.", "服务器以错误码 {code} 退出。", code=number
    )
    return ExitStatus(number, None, meaning)


def _decode_ntstatus(status: int) -> ExitStatus:
    meaning = _NTSTATUS.get(status) or T(
        "The server stopped with Windows error 0x{hex}.", "服务器以 Windows 错误 0x{hex} 停止。", hex=f"{status:08X}"
    )
    return ExitStatus(status, None, meaning)


def crash_signal(status: ExitStatus) -> str | None:
    """The POSIX signal a status amounts to; Windows crashes map onto the same names so one rule set serves both."""
    if status.signal:
        return status.signal
    return NTSTATUS_AS_SIGNAL.get(status.exit_code) if status.exit_code is not None else None


def windows_status_hex(status: ExitStatus) -> str | None:
    """'0xC0000409' when the exit code is a Windows NTSTATUS, else None."""
    code = status.exit_code
    if code is not None and code >= 0x80000000 and status.signal is None:
        return f"0x{code:08X}"
    return None
