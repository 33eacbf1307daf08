"""netsh's firewall listings read in English and Chinese, and the PowerShell reader's, from the recordings in
tests/data/windows/ (sources and which files are composed: tests/data/windows/firewall_SOURCES.md)."""

from __future__ import annotations

from app.core.platform.windows_firewall import (
    FirewallRule,
    parse_current_profiles,
    parse_rules,
    windows_path_key,
)
from tests.paths import ROOT

RECORDINGS = ROOT / "tests" / "data" / "windows"
OURS = r"C:\Users\Ana\AppData\Local\Programs\Python\Python311\python.exe"


def recording(name: str) -> str:
    return (RECORDINGS / name).read_text(encoding="utf-8")


def test_english_verbose_listing():
    rules = parse_rules(recording("firewall_netsh_rules_en.txt"))
    assert rules is not None and len(rules) == 7
    block = rules[0]
    assert (block.name, block.enabled, block.inbound, block.action, block.protocol) == ("Python", True, True,
                                                                                     "block", "tcp")
    assert block.profiles == {"public"} and block.local_ports == "any"
    assert block.program == r"C:\users\ana\appdata\local\programs\python\python311\python.exe"
    assert "Action:                               Block" in block.lines and "Rule Name:" in block.lines[0]
    assert rules[5].profiles == {"private", "public"} and rules[5].action == "allow"
    edge = rules[6]
    assert edge.profiles == {"domain", "private", "public"} and edge.protocol == "udp" and edge.local_ports == "5353"
    assert "Inbound rule for Microsoft Edge" not in edge.program  # the description's text stays out of the fields


def test_chinese_listing():
    rules = parse_rules(recording("firewall_netsh_rules_zh.txt"))
    assert rules is not None and [r.name for r in rules] == ["Python", "Python", "Chrome CDP 9222", "腾讯QQ"]
    assert (rules[0].action, rules[0].enabled, rules[0].inbound, rules[0].profiles) == ("block", True, True,
                                                                                         {"public"})
    assert rules[0].program.endswith(r"张伟\appdata\local\programs\python\python311\python.exe")
    assert rules[2].program == "" and rules[2].action == "allow"  # 程序: 任何 — every program
    assert rules[2].profiles == {"domain", "private", "public"} and rules[3].profiles == {"private"}


def test_powershell_listing():
    text = recording("firewall_powershell.txt")
    rules = parse_rules(text)
    assert rules is not None and len(rules) == 4
    assert rules[0].profiles == {"private", "public"} and rules[0].inbound and rules[0].enabled
    assert rules[1].takes_tcp_port(8090) is False  # UDP
    assert rules[2].profiles == {"domain", "private", "public"}  # Profiles: Any
    assert rules[3].enabled is False
    [profile] = parse_current_profiles(text)
    assert (profile.name, profile.on, profile.blocks_inbound, profile.asks) == ("private", True, True, True)


def test_another_language_is_not_read():
    listing = "Regelname:                            Python\nAktiviert:                            Ja\n"
    assert parse_rules(listing) is None
    assert parse_rules("") is None
    assert parse_current_profiles("Profil für öffentliche Netzwerke:\nStatus   EIN\n") == []


def test_current_profile_in_english_and_chinese():
    [public] = parse_current_profiles(recording("firewall_netsh_currentprofile_en_public.txt"))
    assert (public.name, public.on, public.blocks_inbound, public.asks) == ("public", True, True, True)
    [zh] = parse_current_profiles(recording("firewall_netsh_currentprofile_zh_public.txt"))
    assert zh == public
    [off] = parse_current_profiles(recording("firewall_netsh_currentprofile_en_private_off.txt"))
    assert (off.name, off.on) == ("private", False)
    two = parse_current_profiles("专用配置文件 设置:\n状态                                  打开\n\n"
                                 "Domain Profile Settings:\nState ON\nFirewall Policy AllowInbound,AllowOutbound\n")
    assert [(p.name, p.on, p.blocks_inbound) for p in two] == [("private", True, None), ("domain", True, False)]


def test_ports_and_protocols():
    rule = FirewallRule("r", protocol="tcp", local_ports="80,8000-8100")
    assert rule.takes_tcp_port(8090) and rule.takes_tcp_port(80) and not rule.takes_tcp_port(8101)
    assert not FirewallRule("r", protocol="tcp", local_ports="rpc").takes_tcp_port(8090)
    assert FirewallRule("r").takes_tcp_port(1)


def test_program_paths_compare_as_windows_does():
    env = {"ProgramFiles": r"C:\Program Files", "USERPROFILE": r"C:\Users\Ana"}
    assert windows_path_key(r"%programfiles%\GGUF Launcher\gguf-launcher.exe", env) == \
        windows_path_key(r"C:\PROGRAM FILES\gguf launcher\GGUF-LAUNCHER.EXE", env)
    assert windows_path_key(r"%USERPROFILE%\AppData\Local\Programs\Python\Python311\python.exe", env) == \
        windows_path_key(r"C:\users\ana\appdata\local\programs\python\python311\python.exe", env) == \
        windows_path_key(OURS, env)
    assert windows_path_key(r"%NOT_SET%\x.exe", env) == r"%not_set%\x.exe"
    assert windows_path_key('"C:/Tools/a.exe"', env) == r"c:\tools\a.exe"
