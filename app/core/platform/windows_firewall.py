"""Windows Defender Firewall as ``netsh`` prints it, in English or Chinese, or as our PowerShell reader prints it.

Two readings, neither needs an administrator:

- ``netsh advfirewall firewall show rule name=all dir=in verbose``: one block per rule, ``Label:  value`` lines.
  The labels and most values are in the language of the installation (``Rule Name:`` / ``规则名称:``,
  ``Action: Block`` / ``操作: 阻止``); a block whose labels are in another language is not read at all.
- ``netsh advfirewall show currentprofile``: the network profile(s) in use (``Public Profile Settings:`` /
  ``公用配置文件 设置:``), whether the firewall is on in each, its default for inbound connections and whether it asks
  (``InboundUserNotification``).

The PowerShell reader (``app.core.server.share_firewall``) prints the same labels in English with the cmdlets'
enum names as values (``Enabled: True``, ``Direction: Inbound``, ``Profiles: Private, Public``), read here too.
Recordings and their sources: ``tests/data/windows/firewall_SOURCES.md``.
"""

from __future__ import annotations

import ntpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

PROFILES = ("domain", "private", "public")

_RULE_LABELS = {
    "rule name": "name", "规则名称": "name",
    "enabled": "enabled", "已启用": "enabled",
    "direction": "direction", "方向": "direction",
    "profiles": "profiles", "配置文件": "profiles",
    "protocol": "protocol", "协议": "protocol",
    "localport": "local_port", "本地端口": "local_port",
    "program": "program", "程序": "program",
    "action": "action", "操作": "action",
}
_YES = {"yes", "true", "是"}
_NO = {"no", "false", "否"}
_INBOUND = {"in", "inbound", "入"}
_OUTBOUND = {"out", "outbound", "出"}
_ANY = {"any", "任何", "all"}
_PROFILE_WORDS = {"domain": "domain", "域": "domain", "private": "private", "专用": "private",
                  "public": "public", "公用": "public"}
_ACTIONS = {"allow": "allow", "允许": "allow", "block": "block", "阻止": "block", "bypass": "bypass"}
_PROTOCOLS = {"tcp": "tcp", "6": "tcp", "udp": "udp", "17": "udp"}
_ON = {"on", "启用", "打开"}
_OFF = {"off", "关闭", "禁用"}
_ENABLE = {"enable", "启用"}
_DISABLE = {"disable", "禁用"}
_PROFILE_HEADER = re.compile(
    r"^\s*(Domain|Private|Public|域|专用|公用)\s*(?:Profile|配置文件)\s*(?:Settings|设置)?\s*:\s*$", re.IGNORECASE)
_SETTING = re.compile(r"^\s*(State|状态|Firewall Policy|防火墙策略|InboundUserNotification)\s+(\S.*?)\s*$",
                      re.IGNORECASE)


@dataclass(frozen=True)
class FirewallRule:
    """One inbound or outbound rule as listed. ``None`` where the listing did not say (or said it in words not
    known here); ``program`` is '' for a rule that applies to every program."""

    name: str
    enabled: bool | None = None
    inbound: bool | None = None
    profiles: frozenset[str] = frozenset()
    protocol: str = "any"  # tcp, udp, any, or what was written
    local_ports: str = "any"  # any, or the list as written (8080,9000-9010)
    program: str = ""
    action: str = ""  # allow, block, bypass, or '' when unknown
    lines: tuple[str, ...] = field(default=(), compare=False)  # the listing's own lines: the evidence

    def takes_tcp_port(self, port: int) -> bool:
        """Whether the rule applies to TCP connections to ``port`` (ports written as keywords do not)."""
        if self.protocol not in ("tcp", "any"):
            return False
        if self.local_ports == "any":
            return True
        return any(_in_range(part.strip(), port) for part in self.local_ports.split(","))


@dataclass(frozen=True)
class ProfileState:
    """A network profile in use: whether the firewall is on in it, whether it blocks inbound connections that no
    rule allows, and whether it asks the user when a program starts to listen (``None``: not said)."""

    name: str
    on: bool | None = None
    blocks_inbound: bool | None = None
    asks: bool | None = None


def _in_range(part: str, port: int) -> bool:
    low, dash, high = part.partition("-")
    if not low.isdigit() or (dash and not high.isdigit()):
        return False
    return int(low) <= port <= int(high if dash else low)


def _label_value(line: str) -> tuple[str, str] | None:
    """``Label:   value`` → (known field, value); None for a line that is not one (values may hold colons)."""
    label, colon, value = line.partition(":")
    if not colon:
        return None
    name = _RULE_LABELS.get(" ".join(label.split()).lower())
    return (name, value.strip()) if name else None


def parse_rules(text: str) -> list[FirewallRule] | None:
    """The rules listed in ``text``; None when no rule could be read (another language, an error, nothing)."""
    rules: list[FirewallRule] = []
    fields: dict[str, str] | None = None
    lines: list[str] = []
    for line in text.splitlines():
        pair = _label_value(line)
        if pair is not None and pair[0] == "name":
            if fields is not None:
                rules.append(_rule(fields, lines))
            fields, lines = {"name": pair[1]}, []
        if fields is None:
            continue
        if pair is not None:
            fields.setdefault(pair[0], pair[1])
        if line.strip() and not set(line.strip()) <= {"-"}:
            lines.append(line.strip())
    if fields is not None:
        rules.append(_rule(fields, lines))
    return rules or None


def _word(value: str | None) -> str:
    return (value or "").strip().lower()


def _rule(fields: Mapping[str, str], lines: list[str]) -> FirewallRule:
    enabled, direction = _word(fields.get("enabled")), _word(fields.get("direction"))
    protocol, ports = _word(fields.get("protocol")), _word(fields.get("local_port"))
    program = fields.get("program", "").strip()
    return FirewallRule(
        name=fields["name"],
        enabled=True if enabled in _YES else False if enabled in _NO else None,
        inbound=True if direction in _INBOUND else False if direction in _OUTBOUND else None,
        profiles=_profiles(fields.get("profiles", "")),
        protocol="any" if protocol in _ANY or not protocol else _PROTOCOLS.get(protocol, protocol),
        local_ports="any" if ports in _ANY or not ports else ports,
        program="" if program.lower() in _ANY else program,
        action=_ACTIONS.get(_word(fields.get("action")), ""),
        lines=tuple(lines))


def _profiles(value: str) -> frozenset[str]:
    words = {_word(part) for part in re.split(r"[,，]", value) if part.strip()}
    if words & _ANY:
        return frozenset(PROFILES)
    return frozenset(_PROFILE_WORDS[w] for w in words if w in _PROFILE_WORDS)


def parse_current_profiles(text: str) -> list[ProfileState]:
    """The profiles ``netsh advfirewall show currentprofile`` lists, each with its state; [] when none was read."""
    found: list[ProfileState] = []
    current: dict[str, str] | None = None
    for line in text.splitlines():
        header = _PROFILE_HEADER.match(line)
        if header:
            if current is not None:
                found.append(_profile(current))
            current = {"name": _PROFILE_WORDS[header.group(1).lower()]}
            continue
        setting = _SETTING.match(line)
        if current is not None and setting:
            current.setdefault(" ".join(setting.group(1).lower().split()), setting.group(2))
    if current is not None:
        found.append(_profile(current))
    return found


def _profile(settings: Mapping[str, str]) -> ProfileState:
    state = _word(settings.get("state") or settings.get("状态"))
    policy = _word(settings.get("firewall policy") or settings.get("防火墙策略"))
    notify = _word(settings.get("inboundusernotification"))
    inbound = next((part for part in policy.split(",") if part.endswith("inbound")), "")
    return ProfileState(
        name=settings["name"],
        on=True if state in _ON else False if state in _OFF else None,
        blocks_inbound=inbound.startswith("block") if inbound else None,  # BlockInbound and BlockInboundAlways
        asks=True if notify in _ENABLE else False if notify in _DISABLE else None)


def windows_path_key(path: str, env: Mapping[str, str]) -> str:
    """``path`` as Windows compares program paths: %VARIABLES% expanded (names in any case), either slash, and
    letters in any case (a rule made by the firewall's question holds the path in lower case)."""
    upper = {name.upper(): value for name, value in env.items()}

    def expand(match: re.Match[str]) -> str:
        return upper.get(match.group(1).upper(), match.group(0))

    expanded = re.sub(r"%([^%]+)%", expand, path.strip().strip('"'))
    return ntpath.normpath(expanded.replace("/", "\\")).lower()
