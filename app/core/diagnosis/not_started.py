"""Diagnoses for a server that never became ready in time, or whose program could not even be started."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from app.core.diagnosis import causes_windows
from app.core.diagnosis.diagnose import as_lines
from app.core.diagnosis.log_facts import LOADING_MARKERS, READY_MARKERS
from app.core.diagnosis.signatures import find_hits
from app.core.diagnosis.value import Diagnosis, fix_from_dict, trim_evidence
from app.core.problem import UserError
from app.core.text import T, Text


def _seen(lines: list[str], markers: tuple[str, ...]) -> bool:
    return any(marker in line.lower() for line in lines for marker in markers)


def diagnose_timeout(seconds: float, log_lines: Iterable[Any], config: Any = None, *,
                     seen: str | None = None) -> Diagnosis:
    """The server kept running but never answered its readiness check within ``seconds``.
    ``seen``: what the readiness poll last got, e.g. "HTTP 503 Loading model" or "no HTTP answer"."""
    lines = as_lines(log_lines)
    secs = int(round(seconds))
    message, hint, restartable = _timeout_words(lines, secs, seen or "")
    hits = find_hits(lines)
    polled = [f"readiness check: {seen}"] if seen else []
    evidence = trim_evidence([hit.line for hit in hits[:4]] + lines[-19:])[: 20 - len(polled)] + tuple(polled)
    return Diagnosis(
        cause="ready_timeout", message=message, next_step=hint, evidence=evidence,
        exit_code=None, signal=None, restartable=restartable,
        exit_meaning=T("The server was still running; it was stopped after {s} seconds of waiting.",
                       "服务器仍在运行；等待 {s} 秒后被停止。", s=secs),
    )


def _timeout_words(lines: list[str], secs: int, seen: str) -> tuple[Text, Text, bool]:
    """What the log (and the readiness poll) say the server was doing when time ran out."""
    visible = [line for line in lines if line.strip()]
    loading = "503" in seen or "loading" in seen.lower() or _seen(lines[-5:], ("warming up",)) or (
        _seen(lines, LOADING_MARKERS) and not _seen(lines, READY_MARKERS))
    if not visible and not loading:
        return (T("The server printed nothing at all and did not become ready within {s} seconds.",
                  "服务器在 {s} 秒内没有任何输出，也没有就绪。", s=secs),
                T("Run the copied command line in a terminal to see whether the server program works at all.",
                  "在终端中运行复制的命令行，看看服务器程序能否正常工作。"), False)
    if loading:
        # a second start reads the model from the disk cache and is usually much faster
        return (T("The server was still loading the model after {s} seconds.", "{s} 秒后服务器仍在加载模型。", s=secs),
                T("Large models on slow disks can take minutes: allow more start-up time, "
                  "or move the model to a faster (SSD) disk.",
                  "大模型放在慢速磁盘上可能需要几分钟：请延长启动等待时间，或把模型移到更快的（固态）硬盘。"), True)
    if _seen(lines, READY_MARKERS):
        return (T("The server said it was ready but did not answer on its address within {s} seconds.",
                  "服务器显示已就绪，但在 {s} 秒内没有在其地址上响应。", s=secs),
                T("Check that no firewall, proxy or VPN blocks local connections, then restart.",
                  "请检查防火墙、代理或 VPN 是否阻止了本机连接，然后重新启动。"), True)
    return (T("The server did not become ready within {s} seconds; its last words were: {last}",
              "服务器在 {s} 秒内没有就绪；最后一行输出是：{last}", s=secs, last=visible[-1].strip()[:200]),
            T("Restart with more start-up time. If it hangs again, the log lines below show where it stopped.",
              "延长启动等待时间后重新启动。如果仍然卡住，下面的日志行显示了它停在哪里。"), True)


def _program(argv: Sequence[str] | None, exc: BaseException) -> str:
    name = getattr(exc, "filename", None) or (argv[0] if argv else None)
    return str(name) if name else "?"


def diagnose_start_failure(exc: BaseException, argv: Sequence[str] | None = None, config: Any = None) -> Diagnosis:
    """The program could not be started at all (Popen raised)."""
    program = _program(argv, exc)
    cause, message, hint, fix = _start_failure_parts(exc, program, config)
    return Diagnosis(
        cause=cause, message=message, next_step=hint, action=fix_from_dict(fix), restartable=False,
        evidence=trim_evidence([f"{type(exc).__name__}: {exc}", " ".join(argv or ())[:500]]),
        exit_code=None, signal=None,
        exit_meaning=T("The server program never started.", "服务器程序没有启动。"),
    )


def _start_failure_parts(exc: BaseException, program: str, config: Any) -> tuple[str, Text, Text, dict]:
    builtin = {"backend": "embedded"} if getattr(config, "backend", None) == "llama-server" else {}
    if isinstance(exc, UserError):  # a UserError from backend resolution already says it plainly
        return "start_failed", exc.message, exc.next_step or T("", ""), builtin
    code = getattr(exc, "errno", None)
    quarantined = causes_windows.engine_gone(exc, program)
    if quarantined is not None:
        return ("engine_quarantined", quarantined, causes_windows.DEFENDER_STEPS, builtin)
    if isinstance(exc, FileNotFoundError) or code == errno.ENOENT:
        return ("missing_binary",
                T("The server program {program} was not found.", "找不到服务器程序 {program}。", program=program),
                T("Choose the llama-server program in the settings, install llama.cpp, or use the built-in server.",
                  "在设置中选择 llama-server 程序、安装 llama.cpp，或改用内置服务器。"), builtin)
    if isinstance(exc, PermissionError) or code in (errno.EACCES, errno.EPERM):
        if os.path.isdir(program):
            return _not_executable(program, builtin)
        return ("permission_denied",
                T("The server program {program} may not be run: permission denied.",
                  "没有权限运行服务器程序 {program}。", program=program),
                T("Make the file executable (chmod +x {name}) or choose another copy of llama-server.",
                  "给文件加上可执行权限（chmod +x {name}），或选择另一个 llama-server 程序。", name=Path(program).name),
                {})
    if code == errno.ENOEXEC or isinstance(exc, (IsADirectoryError, NotADirectoryError)):
        return _not_executable(program, builtin)
    return ("start_failed",
            T("The server program {program} could not be started: {error}", "无法启动服务器程序 {program}：{error}",
              program=program, error=str(exc)),
            T("Check the program path in the settings, or use the built-in server.",
              "检查设置中的程序路径，或改用内置服务器。"),
            builtin)


def _not_executable(program: str, builtin: dict) -> tuple[str, Text, Text, dict]:
    return ("not_executable",
            T("{program} is not a program this computer can run (wrong file, or built for another system).",
              "{program} 不是这台电脑能运行的程序（文件不对，或是为其他系统构建的）。", program=program),
            T("Choose the llama-server program built for this system, or use the built-in server.",
              "选择为本系统构建的 llama-server 程序，或改用内置服务器。"), builtin)
