"""Plain words for signals, Windows NTSTATUS values and common exit codes (English and Chinese)."""

from __future__ import annotations

from app.core.text import T, Text

# Signal names by Linux number; used when the running platform does not know a number.
LINUX_SIGNALS = {
    1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS",
    8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE",
    14: "SIGALRM", 15: "SIGTERM", 24: "SIGXCPU", 25: "SIGXFSZ",
}

SIGNAL_MEANINGS: dict[str, Text] = {
    "SIGKILL": T(
        "The server was stopped by force: something outside it ended it at once, without letting it say why.",
        "服务器被强制结束：外部的某个程序或系统立即结束了它，它来不及说明原因。",
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

NTSTATUS_MEANINGS: dict[int, Text] = {
    0xC0000409: T(
        "The server stopped itself after an internal error (Windows fail-fast / stack buffer overrun, 0xC0000409). "
        "llama.cpp ends this way on GPU errors and failed checks.",
        "服务器在内部出错后主动中止（Windows 快速失败 / 栈缓冲区溢出，0xC0000409）。"
        "llama.cpp 遇到显卡错误或检查失败时会这样退出。",
    ),
    0xC0000005: T(
        "The server crashed while touching memory it may not use (Windows access violation, 0xC0000005).",
        "服务器访问了不允许访问的内存而崩溃（Windows 访问冲突，0xC0000005）。",
    ),
    0xC0000135: T(
        "The server could not start because a DLL it needs is missing (0xC0000135).",
        "服务器无法启动，因为缺少它需要的 DLL 文件（0xC0000135）。",
    ),
    0xC0000139: T(
        "The server could not start because a DLL it loaded is another version than the one it was built with "
        "(Windows entry point not found, 0xC0000139).",
        "服务器无法启动，因为它加载的某个 DLL 与构建时的版本不同（Windows 找不到入口点，0xC0000139）。",
    ),
    0xC0E90002: T(
        "Windows refused to run a file of the server because it is not signed (Smart App Control or an App Control "
        "policy, 0xC0E90002).",
        "Windows 拒绝运行服务器的某个文件，因为它没有数字签名（智能应用控制或应用控制策略，0xC0E90002）。",
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

EXIT_MEANINGS: dict[int, Text] = {
    0: T(
        "The server exited by itself without reporting an error (exit code 0).",
        "服务器自行退出，没有报告错误（退出码 0）。",
    ),
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
        "The server failed while starting up (exit code 3): often its network port could not be opened, "
        "or on Windows it aborted after an internal error.",
        "服务器在启动过程中失败（退出码 3）：常见原因是无法打开网络端口，或在 Windows 上因内部错误而中止。",
    ),
    126: T(
        "The server program exists but could not be run (exit code 126).",
        "服务器程序存在但无法运行（退出码 126）。",
    ),
    127: T(
        "The server program or a library it needs was not found (exit code 127).",
        "找不到服务器程序或它需要的库（退出码 127）。",
    ),
}
