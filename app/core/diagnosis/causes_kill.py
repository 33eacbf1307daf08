"""Sentences for a server killed by force (SIGKILL): out of memory, stopped from outside, or nobody can say.

Which one is decided by app/core/diagnosis/memory_evidence.py; only "out of memory" offers a memory fix.
"""

from __future__ import annotations

from app.core.diagnosis.fixes import memory_fix
from app.core.diagnosis.situation import Situation
from app.core.text import T, Text, human_bytes

Parts = tuple[Text, Text, dict, bool]

RESTART_AS_IT_WAS = T(
    "Restart it with the same settings. If it keeps being stopped, look for a program that ends others "
    "(a system monitor, a cleanup tool, a script, or a second copy of this app).",
    "用相同的设置重新启动即可。如果它反复被结束，请检查是否有会结束其他程序的软件"
    "（系统监视器、清理工具、脚本，或本程序的另一个副本）。",
)
RESTART_AND_WATCH = T(
    "Restart it with the same settings. If it is killed again, keep a system monitor open: it shows whether "
    "memory runs short or another program ends it.",
    "用相同的设置重新启动。如果再次被结束，请打开系统监视器观察：它能显示内存是否不足，或是否有其他程序结束了它。",
)


def oom_killed(s: Situation) -> Parts:
    """SIGKILL with memory evidence: the kernel's word, or the RSS or the available memory at the edge just before."""
    fix, hint = memory_fix(s.config, s.facts, s.block_count, gpu_first=False, plan=s.plan)
    return _oom_message(s), hint, fix, _restartable_after_oom(s)


def _oom_message(s: Situation) -> Text:
    peak, kill = s.peak_rss_text, s.kill
    if s.oom is not None and s.oom.confirmed:
        if peak:
            return T("The server was stopped by the system because the computer ran out of memory "
                     "(it used {peak} just before).",
                     "模型所需内存超过了可用内存，系统强制结束了服务器进程（结束前占用 {peak}）。", peak=peak)
        return T("The server was stopped by the system because the computer ran out of memory.",
                 "模型所需内存超过了可用内存，系统强制结束了服务器进程。")
    if kill is not None and kill.low and not kill.rss_near_limit:
        return T("The server was killed, most likely because memory ran out: only {free} of {limit} were available "
                 "just before (it used {rss}).",
                 "服务器被强制结束，很可能是内存耗尽：结束前 {limit} 中只剩 {free} 可用（它占用 {rss}）。",
                 free=human_bytes(kill.available_bytes), limit=human_bytes(kill.limit_bytes),
                 rss=human_bytes(kill.used_bytes))
    limit = human_bytes(s.trend.limit_bytes) if s.trend and s.trend.limit_bytes else "?"
    return T("The server was killed, most likely because the computer ran out of memory "
             "(it used {peak} of {limit} just before).",
             "服务器被强制结束，很可能是内存耗尽（结束前占用 {peak}，上限 {limit}）。", peak=peak or "?", limit=limit)


def _restartable_after_oom(s: Situation) -> bool:
    """Killed while loading: the same settings will be killed again. While serving: one request may have been too
    big."""
    return s.was_ready is not False


def killed_from_outside(s: Situation) -> Parts:
    """SIGKILL while memory was fine (the readings), or at least not by the kernel's OOM killer (its word)."""
    kill = s.kill
    if kill is not None and kill.recent:
        message = T("The server was stopped from outside while memory was fine (it used {rss}; {free} were free): "
                    "another program, a system tool or someone ended it.",
                    "服务器在内存充足时被外部结束（它占用 {rss}，还有 {free} 可用）："
                    "是其他程序、系统工具或某人结束了它。",
                    rss=human_bytes(kill.used_bytes), free=human_bytes(kill.available_bytes))
    else:
        # user-space OOM killers (systemd-oomd, earlyoom) leave no kernel record: they are "a system tool" here
        message = T("The server was stopped from outside, not by the operating system's out-of-memory killer (it "
                    "recorded no such kill): another program, a system tool or someone ended it.",
                    "服务器被外部结束，并不是操作系统的内存耗尽保护结束了它（系统没有这样的记录）："
                    "是其他程序、系统工具或某人结束了它。")
    return message, RESTART_AS_IT_WAS, {}, True


def killed(s: Situation) -> Parts:
    """SIGKILL and nothing readable either way: say that nobody can tell, and offer no memory fix."""
    peak = s.peak_rss_text
    if peak:
        message = T("The server was killed by force (it used {peak} just before), and nothing here shows why: this "
                    "computer's free memory and its out-of-memory records could not be read.",
                    "服务器被强制结束（结束前占用 {peak}），原因无从得知：无法读取这台电脑的可用内存和内存耗尽记录。",
                    peak=peak)
    else:
        message = T("The server was killed by force, and nothing here shows why: this computer's free memory and its "
                    "out-of-memory records could not be read.",
                    "服务器被强制结束，原因无从得知：无法读取这台电脑的可用内存和内存耗尽记录。")
    return message, RESTART_AND_WATCH, {}, s.was_ready is not False


BUILDERS = {"oom_killed": oom_killed, "killed_from_outside": killed_from_outside, "killed": killed}
