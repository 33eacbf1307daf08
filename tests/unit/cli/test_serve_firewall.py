"""`serve --share` on Windows tells the firewall's verdict the way the window does: the core's sentence and next
step, or one ``firewall`` JSON event (recordings: tests/data/windows/firewall_SOURCES.md)."""

from __future__ import annotations

import json

from app.cli.serve import firewall_teller
from app.core.platform.windows_firewall import parse_current_profiles, parse_rules
from app.core.server.share_firewall import decide
from tests.paths import ROOT

RECORDINGS = ROOT / "tests" / "data" / "windows"
OURS = r"C:\Users\Ana\AppData\Local\Programs\Python\Python311\python.exe"


def blocked():
    rules = parse_rules((RECORDINGS / "firewall_netsh_rules_en.txt").read_text(encoding="utf-8"))
    profiles = parse_current_profiles(
        (RECORDINGS / "firewall_netsh_currentprofile_en_public.txt").read_text(encoding="utf-8"))
    return decide(rules, profiles, OURS, 8090, {"USERPROFILE": r"C:\Users\Ana"})


def test_the_sentence_and_its_next_step(capsys, monkeypatch):
    monkeypatch.setattr("app.core.text._language", "en")
    firewall_teller(False)(blocked())
    sentence, step = capsys.readouterr().out.splitlines()
    assert sentence.startswith("Windows Defender Firewall blocks other devices from reaching the shared server: "
                               "its rule “Python” blocks python.exe on Public networks")
    assert step.startswith("  next step: Open Windows Security → Firewall & network protection → Allow an app")
    assert step.endswith("or keep the share on this computer only.")


def test_one_json_event_with_the_fix_as_data(capsys, monkeypatch):
    monkeypatch.setattr("app.core.text._language", "zh")
    firewall_teller(True)(blocked())
    (line,) = capsys.readouterr().out.splitlines()
    event = json.loads(line)
    assert event["event"] == "firewall" and event["verdict"] == "blocked" and event["keep_local_host"] == "127.0.0.1"
    assert "公用网络上阻止 python.exe" in event["message"] and "允许应用通过防火墙" in event["next_step"]
    assert any(line.startswith("Action:") and line.endswith("Block") for line in event["evidence"])
