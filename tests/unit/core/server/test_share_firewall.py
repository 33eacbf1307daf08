"""Whether Windows Defender Firewall lets other devices reach a share: the verdict from the recorded listings
(tests/data/windows/firewall_SOURCES.md cites each one), and the reader run for real with stand-in programs named
netsh and powershell on PATH that print those recordings (or hang).

Rules behind the verdicts: Cancel on the firewall's question makes inbound Block rules for the program (Microsoft
Teams docs, quoted in MicrosoftDocs/OfficeDocs-SkypeForBusiness#3557), and Windows does not ask again
(IIC2233/Syllabus-2021-2#333); block rules take precedence over allow rules ([MS-FASP] 2.2.34 FW_RULE_ACTION).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from app.core.platform.windows_firewall import parse_current_profiles, parse_rules
from app.core.server.share_firewall import (
    LOOPBACK,
    Verdict,
    applies,
    ask_ahead,
    check_share_firewall,
    decide,
    read_output,
    watch_share_firewall,
)
from tests.paths import ROOT

RECORDINGS = ROOT / "tests" / "data" / "windows"
OURS = r"C:\Users\Ana\AppData\Local\Programs\Python\Python311\python.exe"
ENV = {"USERPROFILE": r"C:\Users\Ana", "ProgramFiles(x86)": r"C:\Program Files (x86)"}


def recording(name: str) -> str:
    return (RECORDINGS / name).read_text(encoding="utf-8")


RULES_EN = recording("firewall_netsh_rules_en.txt")
PUBLIC = parse_current_profiles(recording("firewall_netsh_currentprofile_en_public.txt"))
PRIVATE = parse_current_profiles(recording("firewall_netsh_currentprofile_en_private.txt"))


def field(label: str, value: str) -> str:
    """A listing line as netsh pads it (values from column 38)."""
    return (label + ":").ljust(38) + value


def verdict_of(rules_text: str, profiles, program: str = OURS, port: int = 8090):
    return decide(parse_rules(rules_text), profiles, program, port, ENV)


def test_a_block_rule_for_our_program_on_the_network_in_use_is_told_with_the_fix():
    check = verdict_of(RULES_EN, PUBLIC)
    assert check.verdict is Verdict.BLOCKED and check.message is not None and check.next_step is not None
    assert check.message.render("en") == (
        "Windows Defender Firewall blocks other devices from reaching the shared server: its rule “Python” blocks "
        "python.exe on Public networks (Windows makes such a rule when its question is cancelled or Block is "
        "chosen).")
    assert check.next_step.render("en").startswith(
        "Open Windows Security → Firewall & network protection → Allow an app through firewall → Change settings, "
        "tick “Python” under Public")
    zh = check.message.render("zh") + check.next_step.render("zh")
    assert "公用网络上阻止 python.exe" in zh and "允许应用通过防火墙" in zh and "“Python”" in zh
    assert check.allow is not None and check.allow.entry == "Python" and check.allow.profiles == ("public",)
    assert check.keep_local_host == LOOPBACK
    assert field("Action", "Block") in check.evidence
    assert all("python313" not in line for line in check.evidence)  # another interpreter's rule is not evidence


def test_a_block_on_public_does_not_block_while_the_network_is_private():
    assert verdict_of(RULES_EN, PRIVATE).verdict is Verdict.ALLOWED  # the Allow on Private applies


def test_allow_and_block_on_the_same_network_block_as_windows_does():
    both = RULES_EN.replace(field("Profiles", "Private") + "\n", field("Profiles", "Public") + "\n")
    rules = parse_rules(both)
    assert rules is not None and sum(r.action == "allow" and r.profiles == {"public"} for r in rules) == 2
    assert verdict_of(both, PUBLIC).verdict is Verdict.BLOCKED


def test_rules_for_other_programs_are_ignored():
    public = recording("firewall_netsh_currentprofile_en_public.txt")
    domain = parse_current_profiles(public.replace("Public", "Domain"))
    assert verdict_of(RULES_EN, domain).verdict is Verdict.UNKNOWN  # python313's Block on Domain is not ours
    other = r"C:\Users\Ana\AppData\Local\Programs\Python\Python313\python.exe"
    assert verdict_of(RULES_EN, domain, program=other).verdict is Verdict.BLOCKED
    assert verdict_of(RULES_EN, PUBLIC, program=r"C:\Program Files\nodejs\node.exe").verdict is Verdict.ALLOWED


def test_no_rule_yet_means_windows_asks_now():
    check = verdict_of(RULES_EN, PUBLIC, program=r"C:\Program Files\GGUF Launcher\gguf-launcher.exe")
    assert check.verdict is Verdict.ASKS and check.message is not None and check.next_step is None
    assert check.message.render("en") == (
        "Windows Defender Firewall is asking whether gguf-launcher.exe may accept connections: choose Allow with "
        "Public networks ticked (the network in use is Public); Cancel blocks other devices from the share.")
    assert "公用网络" in check.message.render("zh")
    quiet = [p.__class__(p.name, p.on, p.blocks_inbound, False) for p in PUBLIC]  # InboundUserNotification Disable
    assert verdict_of(RULES_EN, quiet, program=r"C:\x\gguf-launcher.exe").verdict is Verdict.UNKNOWN


def test_what_cannot_be_told_says_nothing():
    for check in (decide(None, PUBLIC, OURS, 8090), decide(parse_rules(RULES_EN), [], OURS, 8090)):
        assert check.verdict is Verdict.UNKNOWN and check.message is None and check.next_step is None
    off = parse_current_profiles(recording("firewall_netsh_currentprofile_en_private_off.txt"))
    assert verdict_of(RULES_EN, off).verdict is Verdict.OFF and verdict_of(RULES_EN, off).message is None


def test_disabled_rules_and_rules_for_other_ports_do_not_block():
    disabled = RULES_EN.replace(field("Enabled", "Yes"), field("Enabled", "No"))
    assert verdict_of(disabled, PUBLIC).verdict is Verdict.UNKNOWN
    one_port = RULES_EN.replace(field("LocalPort", "Any"), field("LocalPort", "3389"))
    assert verdict_of(one_port, PUBLIC).verdict is Verdict.UNKNOWN
    assert verdict_of(one_port, PUBLIC, port=3389).verdict is Verdict.BLOCKED


def test_chinese_windows():
    rules = recording("firewall_netsh_rules_zh.txt")
    profiles = parse_current_profiles(recording("firewall_netsh_currentprofile_zh_public.txt"))
    program = r"C:\Users\张伟\AppData\Local\Programs\Python\Python311\python.exe"
    check = decide(parse_rules(rules), profiles, program, 8090, {})
    assert check.verdict is Verdict.BLOCKED and check.message is not None
    assert "在公用网络上阻止 python.exe" in check.message.render("zh")


def test_the_sentence_before_sharing():
    assert ask_ahead("0.0.0.0", windows=False) is None and ask_ahead("127.0.0.1", windows=True) is None
    said = ask_ahead("0.0.0.0", windows=True)
    assert said is not None and said.render("en").startswith("Windows may ask whether this app may accept")
    assert "专用网络" in said.render("zh")
    assert applies("192.168.1.20", windows=True) and not applies("::1", windows=True)


# The reader, run for real: stand-in programs on PATH print the recordings.

def stand_in(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)


@pytest.fixture
def bin_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))  # nothing else: a powershell from this machine cannot answer
    return folder


def test_netsh_read_through_the_runner(bin_dir):
    cat = shutil.which("cat", path="/usr/bin:/bin")
    stand_in(bin_dir, "netsh", f'case "$*" in *currentprofile*) exec {cat} "{RECORDINGS}/'
                               f'firewall_netsh_currentprofile_en_public.txt";; '
                               f'*"name=all dir=in verbose"*) exec {cat} "{RECORDINGS}/firewall_netsh_rules_en.txt";; '
                               f'esac\nexit 1\n')
    check = check_share_firewall("0.0.0.0", 8090, program=OURS, windows=True, env=ENV)
    assert check.verdict is Verdict.BLOCKED and check.allow is not None and check.allow.profiles == ("public",)


def test_powershell_reads_what_netsh_says_in_another_language(bin_dir):
    cat = shutil.which("cat", path="/usr/bin:/bin")
    stand_in(bin_dir, "netsh", "echo 'Regelname:                            Python'\n")
    stand_in(bin_dir, "powershell", f'exec {cat} "{RECORDINGS}/firewall_powershell.txt"\n')
    check = check_share_firewall("0.0.0.0", 8090, program=OURS, windows=True, env=ENV)
    assert check.verdict is Verdict.BLOCKED and check.allow is not None and check.allow.profiles == ("private",)


def test_a_reader_that_hangs_is_cut_and_nothing_is_said(bin_dir):
    sleep = shutil.which("sleep", path="/usr/bin:/bin")
    stand_in(bin_dir, "netsh", f"exec {sleep} 60\n")
    started = time.monotonic()
    check = check_share_firewall("0.0.0.0", 8090, program=OURS, windows=True, env=ENV,
                                 run=lambda argv, _timeout: read_output(argv, 0.5))
    assert check.verdict is Verdict.UNKNOWN and check.message is None
    assert time.monotonic() - started < 30  # two half-second cuts, not the minute the stand-in sleeps


def test_nothing_runs_elsewhere_than_on_windows(bin_dir, tmp_path):
    marker = tmp_path / "ran"
    stand_in(bin_dir, "netsh", f"echo x > '{marker}'\n")
    assert check_share_firewall("0.0.0.0", 8090, program=OURS, windows=False).verdict is Verdict.NOT_CHECKED
    assert check_share_firewall("127.0.0.1", 8090, program=OURS, windows=True).verdict is Verdict.NOT_CHECKED
    assert not marker.exists()


def test_the_watch_tells_the_question_then_the_block_once_each(bin_dir, tmp_path):
    """Windows asks (no rule names the program); the user presses Cancel (its Block rules appear): both are told,
    each once, and the watch ends with the Block."""
    cat = shutil.which("cat", path="/usr/bin:/bin")
    rules = tmp_path / "rules.txt"
    rules.write_text(RULES_EN, encoding="utf-8")
    stand_in(bin_dir, "netsh", f'case "$*" in *currentprofile*) exec {cat} "{RECORDINGS}/'
                               f'firewall_netsh_currentprofile_en_public.txt";; esac\nexec {cat} "{rules}"\n')
    launcher = r"C:\Program Files\GGUF Launcher\gguf-launcher.exe"
    told = []

    def tell(check):
        told.append(check.verdict)
        if check.verdict is Verdict.ASKS:  # the user cancels: Windows writes Block rules for the program
            rules.write_text(RULES_EN.replace(r"C:\users\ana\appdata\local\programs\python\python311\python.exe",
                                              r"C:\program files\gguf launcher\gguf-launcher.exe"), encoding="utf-8")

    last = watch_share_firewall("0.0.0.0", 8090, tell, interval_s=0.05, polls=5,
                                check=lambda host, port: check_share_firewall(host, port, program=launcher,
                                                                              windows=True, env=ENV))
    assert told == [Verdict.ASKS, Verdict.BLOCKED] and last.verdict is Verdict.BLOCKED


def test_the_watch_stops_with_the_share_and_gives_up_on_an_unanswered_question():
    asks = decide(parse_rules(RULES_EN), PUBLIC, r"C:\x\gguf-launcher.exe", 8090, ENV)
    reads, told = [], []
    last = watch_share_firewall("0.0.0.0", 8090, told.append, interval_s=0.01, polls=3,
                                check=lambda host, port: reads.append(port) or asks)
    assert last.verdict is Verdict.ASKS and len(reads) == 4 and len(told) == 1  # told once, read 1 + 3 times
    reads.clear()
    watch_share_firewall("0.0.0.0", 8090, told.append, stop=lambda: True, interval_s=5, polls=3,
                         check=lambda host, port: reads.append(port) or asks)
    assert len(reads) == 1 and len(told) == 1  # stopped: nothing more read or told
