"""Whether Windows Defender Firewall lets other devices reach a share, told in one sentence with the fix as data.

The share's proxy listens in this app's own process (``python.exe``, or ``gguf-launcher.exe`` when bundled), so that
is the program Windows asks about the first time it listens beyond this computer ("Windows Defender Firewall has
blocked some features of this app"). Allow makes inbound Allow rules for the program; Cancel makes inbound Block
rules for it (TCP and UDP), and Windows does not ask again: other devices time out and nobody says why.

:func:`check_share_firewall` reads the rules and the profile in use (``netsh``, no administrator needed; PowerShell
when netsh speaks a language not read here) and decides:

- ``BLOCKED``: an enabled inbound Block rule for this program covers TCP on our port on a profile in use with the
  firewall on. Block beats Allow when both match ([MS-FASP] 2.2.34 FW_RULE_ACTION), so an Allow rule does not help;
- ``ALLOWED``: no such Block, and an Allow rule for this program on every profile in use;
- ``ASKS``: no rule names this program, the firewall is on, blocks what no rule allows and asks (its question is on
  the screen now);
- ``OFF``: the firewall is off on every profile in use;
- ``UNKNOWN``: anything else (unreadable output, a timeout, rules for another profile only): nothing is said.

Only ``BLOCKED`` and ``ASKS`` have a sentence; each is what the evidence proves, nothing more. Elsewhere than on
Windows nothing is run (``NOT_CHECKED``).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from app.core.launch.ports import is_loopback
from app.core.platform.windows_firewall import (
    FirewallRule,
    ProfileState,
    parse_current_profiles,
    parse_rules,
    windows_path_key,
)
from app.core.problem import FixAction
from app.core.text import T, Text

logger = logging.getLogger(__name__)

NETSH_RULES = ("netsh", "advfirewall", "firewall", "show", "rule", "name=all", "dir=in", "verbose")
NETSH_PROFILES = ("netsh", "advfirewall", "show", "currentprofile")
# Prints the profiles in use and the inbound rules with netsh's English labels and the cmdlets' enum names, which
# stay English on every installation. Filters are read once (-All) and joined: one call per rule takes minutes.
POWERSHELL_SCRIPT = r"""
[Console]::OutputEncoding = [Text.Encoding]::UTF8
foreach ($c in Get-NetConnectionProfile) {
  $n = ('' + $c.NetworkCategory) -replace 'DomainAuthenticated', 'Domain'
  $f = Get-NetFirewallProfile -PolicyStore ActiveStore -Name $n
  "$n Profile Settings:"
  'State ' + $(if ($f.Enabled) { 'ON' } else { 'OFF' })
  'Firewall Policy ' + $f.DefaultInboundAction + 'Inbound'
  'InboundUserNotification ' + $(if (('' + $f.NotifyOnListen) -eq 'True') { 'Enable' } else { 'Disable' })
  ''
}
$apps = @{}; Get-NetFirewallApplicationFilter -All | ForEach-Object { $apps[$_.InstanceID] = $_.Program }
$ports = @{}; Get-NetFirewallPortFilter -All | ForEach-Object { $ports[$_.InstanceID] = $_ }
Get-NetFirewallRule -Direction Inbound | ForEach-Object {
  $p = $ports[$_.InstanceID]
  'Rule Name: ' + $_.DisplayName
  'Enabled: ' + $_.Enabled
  'Direction: ' + $_.Direction
  'Profiles: ' + $_.Profile
  'Protocol: ' + $p.Protocol
  'LocalPort: ' + ($p.LocalPort -join ',')
  'Program: ' + $apps[$_.InstanceID]
  'Action: ' + $_.Action
  ''
}
"""
POWERSHELL = ("powershell", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-Command",
              POWERSHELL_SCRIPT)
NETSH_TIMEOUT_S = 15.0
POWERSHELL_TIMEOUT_S = 60.0
LOOPBACK = "127.0.0.1"

Runner = Callable[[Sequence[str], float], "str | None"]


class Verdict(StrEnum):
    BLOCKED = "blocked"
    ALLOWED = "allowed"
    ASKS = "asks"
    OFF = "off"
    UNKNOWN = "unknown"
    NOT_CHECKED = "not_checked"


@dataclass(frozen=True)
class AllowSteps:
    """The fix as data: the entry to tick in "Allow an app through firewall" and the columns to tick it in."""

    entry: str  # the rule's name, which is what that list shows
    program: str
    profiles: tuple[str, ...]  # domain / private / public, those in use where the rule blocks


@dataclass(frozen=True)
class FirewallCheck:
    """The verdict with the problem shape (``message``, ``next_step``, ``evidence``, ``action``) when there is
    something to say; ``allow`` and ``keep_local_host`` are the two fixes (let the program in, or share on this
    computer only)."""

    verdict: Verdict
    program: str = ""
    message: Text | None = None
    next_step: Text | None = None
    evidence: tuple[str, ...] = ()
    action: FixAction | None = None
    allow: AllowSteps | None = None
    keep_local_host: str | None = None
    profiles: tuple[str, ...] = field(default=())

    def to_dict(self, lang: str | None = None) -> dict[str, object]:
        return {"verdict": self.verdict.value, "program": self.program,
                "message": self.message.render(lang) if self.message else None,
                "next_step": self.next_step.render(lang) if self.next_step else None,
                "evidence": list(self.evidence), "keep_local_host": self.keep_local_host}


def is_windows() -> bool:
    return sys.platform == "win32"


def applies(host: str, *, windows: bool | None = None) -> bool:
    """Whether Windows Firewall stands between other devices and a share on ``host``."""
    return (is_windows() if windows is None else windows) and not is_loopback(host)


def our_program() -> str:
    """The program that listens for the share: this process's own executable (a venv's python.exe starts the base
    interpreter, which is the process that listens and the program Windows asks about)."""
    import psutil

    try:
        return psutil.Process().exe()
    except (OSError, psutil.Error) as error:
        logger.info("own executable unreadable, using sys.executable: %s", error)
        return sys.executable


def program_label(program: str) -> str:
    return program.replace("/", "\\").rsplit("\\", 1)[-1] or program


def ask_ahead(host: str, *, windows: bool | None = None) -> Text | None:
    """Before sharing beyond this computer on Windows: what Windows may ask and what to answer."""
    if not applies(host, windows=windows):
        return None
    return T("Windows may ask whether this app may accept connections from the network: choose Allow with the kind "
             "of network in use ticked (Private for a home or work network); if the question is cancelled, Windows "
             "blocks other devices from the share.",
             "Windows 可能会询问是否允许这个应用接受来自网络的连接：请勾选当前所用的网络类型（家庭或工作网络为"
             "“专用网络”）并选择“允许”；如果取消了询问，Windows 会阻止其他设备访问这个共享。")


_PROFILE_EN = {"domain": "Domain", "private": "Private", "public": "Public"}
_PROFILE_ZH = {"domain": "域", "private": "专用", "public": "公用"}


def _names(profiles: Sequence[str], names: Mapping[str, str], joiner: str) -> str:
    return joiner.join(names[p] for p in profiles)


def decide(rules: Sequence[FirewallRule] | None, profiles: Sequence[ProfileState], program: str,
           port: int, env: Mapping[str, str] | None = None) -> FirewallCheck:
    """The verdict for TCP connections from other devices to ``program`` listening on ``port``."""
    if rules is None or not profiles:
        return FirewallCheck(Verdict.UNKNOWN, program)
    if all(p.on is False for p in profiles):
        return FirewallCheck(Verdict.OFF, program)
    environ = os.environ if env is None else env
    key = windows_path_key(program, environ)
    mine = [r for r in rules if r.inbound and r.program and windows_path_key(r.program, environ) == key]
    on = [p.name for p in profiles if p.on]
    live = [r for r in mine if r.enabled and r.takes_tcp_port(port)]
    blocking = [r for r in live if r.action == "block" and r.profiles & set(on)]
    if blocking:
        return _blocked(program, blocking, [p for p in on if any(p in r.profiles for r in blocking)])
    if on and all(any(r.action == "allow" and p in r.profiles for r in live) for p in on):
        return FirewallCheck(Verdict.ALLOWED, program, profiles=tuple(on))
    if not mine and on and all(p.blocks_inbound and p.asks for p in profiles if p.on):
        return _asks(program, on)
    return FirewallCheck(Verdict.UNKNOWN, program, profiles=tuple(on))


def _blocked(program: str, rules: Sequence[FirewallRule], profiles: Sequence[str]) -> FirewallCheck:
    entry, name = rules[0].name, program_label(program)
    message = T("Windows Defender Firewall blocks other devices from reaching the shared server: its rule "
                "“{entry}” blocks {name} on {where} networks (Windows makes such a rule when its question is "
                "cancelled or Block is chosen).",
                "Windows Defender 防火墙阻止其他设备访问共享的服务器：它的规则“{entry}”在{where_zh}网络上阻止 {name}"
                "（取消 Windows 的询问或选择“阻止”时，Windows 会生成这样的规则）。",
                entry=entry, name=name, where=_names(profiles, _PROFILE_EN, " and "),
                where_zh=_names(profiles, _PROFILE_ZH, "和"))
    fix = T("Open Windows Security → Firewall & network protection → Allow an app through firewall → Change "
            "settings, tick “{entry}” under {where} (an administrator may have to confirm), then turn sharing off "
            "and on; or keep the share on this computer only.",
            "打开 Windows 安全中心 → 防火墙和网络保护 → 允许应用通过防火墙 → 更改设置，在“{where_zh}”下勾选"
            "“{entry}”（可能需要管理员确认），然后关闭再打开共享；或者只在本机共享。",
            entry=entry, where=_names(profiles, _PROFILE_EN, " and "), where_zh=_names(profiles, _PROFILE_ZH, "、"))
    evidence = tuple(line for rule in rules for line in rule.lines)
    return FirewallCheck(Verdict.BLOCKED, program, message, fix, evidence, None,
                         AllowSteps(entry, program, tuple(profiles)), LOOPBACK, tuple(profiles))


def _asks(program: str, profiles: Sequence[str]) -> FirewallCheck:
    message = T("Windows Defender Firewall is asking whether {name} may accept connections: choose Allow with "
                "{where} networks ticked (the network in use is {where}); Cancel blocks other devices from the share.",
                "Windows Defender 防火墙正在询问是否允许 {name} 接受连接：请勾选“{where_zh}网络”并选择“允许”"
                "（当前网络是{where_zh}网络）；选择“取消”会阻止其他设备访问这个共享。",
                name=program_label(program), where=_names(profiles, _PROFILE_EN, " and "),
                where_zh=_names(profiles, _PROFILE_ZH, "和"))
    return FirewallCheck(Verdict.ASKS, program, message, profiles=tuple(profiles))


def read_output(argv: Sequence[str], timeout_s: float) -> str | None:
    """What ``argv`` prints (stdout), or None when it cannot be run or does not finish within ``timeout_s``.
    netsh writes in the console's OEM code page when its output is redirected (CP936 on a Chinese Windows)."""
    flags = getattr(subprocess, "CREATE_NO_WINDOW", 0)
    try:
        done = subprocess.run(list(argv), stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout_s,
                              check=False, creationflags=flags)
    except subprocess.TimeoutExpired:
        logger.warning("%s did not answer within %.0f s", argv[0], timeout_s)
        return None
    except OSError as error:
        logger.warning("%s could not be run: %s", argv[0], error)
        return None
    encoding = "utf-8" if argv[0] == "powershell" or not is_windows() else "oem"
    return done.stdout.decode(encoding, errors="replace")


def check_share_firewall(host: str, port: int, *, program: str | None = None, windows: bool | None = None,
                         run: Runner = read_output, env: Mapping[str, str] | None = None) -> FirewallCheck:
    """The firewall's verdict on a share listening on ``host``:``port`` (run off the GUI thread: netsh takes a
    second or two, PowerShell longer)."""
    program = program or our_program()
    if not applies(host, windows=windows):
        return FirewallCheck(Verdict.NOT_CHECKED, program)
    rules_text, profiles_text = run(NETSH_RULES, NETSH_TIMEOUT_S), run(NETSH_PROFILES, NETSH_TIMEOUT_S)
    rules = parse_rules(rules_text) if rules_text else None
    profiles = parse_current_profiles(profiles_text) if profiles_text else []
    if rules is None or not profiles:
        logger.info("netsh's firewall listing was not read (%s); asking PowerShell", "rules" if rules is None
                    else "profiles")
        text = run(POWERSHELL, POWERSHELL_TIMEOUT_S) or ""
        rules, profiles = rules if rules is not None else parse_rules(text), profiles or parse_current_profiles(text)
    check = decide(rules, profiles, program, port, env)
    logger.info("firewall for %s port %d: %s", program, port, check.verdict.value)
    return check



def watch_share_firewall(host: str, port: int, tell: Callable[[FirewallCheck], object], *,
                         stop: Callable[[], bool] = lambda: False,
                         check: Callable[[str, int], FirewallCheck] | None = None,
                         interval_s: float = 3.0, polls: int = 60) -> FirewallCheck:
    """Read the verdict, ``tell`` it when it has a sentence, and read it again every ``interval_s`` while Windows is
    asking (at most ``polls`` more times), so an answer of Cancel is told as soon as its Block rule exists. Each
    sentence is told once; ``stop()`` ends the watch (the share closed). Returns the last verdict."""
    read = check or check_share_firewall
    verdict, told = read(host, port), None
    for _ in range(polls):
        if verdict.message is not None and verdict.message != told and not stop():
            tell(verdict)
            told = verdict.message
        if verdict.verdict is not Verdict.ASKS or _stopped_within(stop, interval_s):
            return verdict
        verdict = read(host, port)
    if verdict.message is not None and verdict.message != told and not stop():
        tell(verdict)
    return verdict


def _stopped_within(stop: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if stop():
            return True
        time.sleep(min(0.2, seconds))
    return stop()
