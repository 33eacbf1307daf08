"""The sharing box tells what Windows Defender Firewall does to a share beyond this computer (issue 28).

The share listens for real (0.0.0.0, a free port, in front of a supervisor that is never started); the box reads
the verdict through the core's real reader, run with the platform said to be Windows and a stand-in program named
netsh on PATH that prints recorded listings (tests/data/windows/firewall_SOURCES.md). Nothing here stands in for the
server or the share."""

from __future__ import annotations

import functools
import os
import shutil
from pathlib import Path

import pytest

from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.server.lan_share import ALL_NETWORKS, LOOPBACK
from app.core.server.share_firewall import check_share_firewall
from app.core.server.supervisor import Supervisor
from app.ui.steps.server.share_box import ShareBox
from tests.paths import ROOT

RECORDINGS = ROOT / "tests" / "data" / "windows"
OURS = r"C:\Users\Ana\AppData\Local\Programs\Python\Python311\python.exe"
ENV = {"USERPROFILE": r"C:\Users\Ana"}


@pytest.fixture
def netsh(tmp_path, monkeypatch) -> Path:
    """A stand-in netsh printing the rules file it is pointed at (the test changes it as a user's answer would)
    and the Public profile recording."""
    folder = tmp_path / "bin"
    folder.mkdir()
    rules = tmp_path / "rules.txt"
    cat = shutil.which("cat", path="/usr/bin:/bin")
    script = folder / "netsh"
    script.write_text(f'#!/bin/sh\ncase "$*" in *currentprofile*) exec {cat} '
                      f'"{RECORDINGS}/firewall_netsh_currentprofile_en_public.txt";; esac\nexec {cat} "{rules}"\n',
                      encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    return rules


def windows_box(qtbot, program: str) -> ShareBox:
    box = ShareBox()
    qtbot.addWidget(box)
    box.windows = True
    box.firewall_check = functools.partial(check_share_firewall, program=program, windows=True, env=ENV)
    box.ask_poll_ms = 100
    return box


def share_on_all_networks(box: ShareBox, tiny_model) -> Supervisor:
    supervisor = Supervisor(LaunchConfig(model=str(tiny_model), port=find_free_port()))
    box.set_supervisor(supervisor)
    box.where.setCurrentIndex(box.where.findData(ALL_NETWORKS))
    box.port.setValue(find_free_port())
    box.enabled.setChecked(True)
    assert box.share is not None and box.share.running
    return supervisor


def test_a_cancelled_question_is_told_with_the_fix_and_the_share_can_stay_here(qtbot, tiny_model, netsh):
    netsh.write_text((RECORDINGS / "firewall_netsh_rules_en.txt").read_text(encoding="utf-8"), encoding="utf-8")
    box = windows_box(qtbot, OURS)
    box.where.setCurrentIndex(box.where.findData(ALL_NETWORKS))
    assert "Windows may ask whether this app may accept connections" in box.warning.text()  # before it starts
    supervisor = share_on_all_networks(box, tiny_model)
    qtbot.waitUntil(lambda: box.firewall.isVisibleTo(box), timeout=20_000)
    assert box.firewall.text().startswith("Windows Defender Firewall blocks other devices from reaching the shared "
                                          "server: its rule “Python” blocks python.exe on Public networks")
    assert "Allow an app through firewall" in box.firewall.text()
    assert box.keep_local.isVisibleTo(box) and box.keep_local.text() == "Keep it on this computer"
    box.keep_local.click()
    assert box.share is not None and box.share.running and box.share.settings.host == LOOPBACK
    assert not box.firewall.isVisibleTo(box) and not box.keep_local.isVisibleTo(box)
    assert "Windows may ask" not in box.warning.text()
    supervisor.close()


def test_while_windows_asks_the_box_says_so_and_reads_the_answer(qtbot, tiny_model, netsh):
    """No rule names the program yet: Windows is asking. Then Cancel (a Block rule appears): the box says so."""
    launcher = r"C:\Program Files\GGUF Launcher\gguf-launcher.exe"
    rules = (RECORDINGS / "firewall_netsh_rules_en.txt").read_text(encoding="utf-8")
    netsh.write_text(rules, encoding="utf-8")
    box = windows_box(qtbot, launcher)
    supervisor = share_on_all_networks(box, tiny_model)
    qtbot.waitUntil(lambda: "is asking whether gguf-launcher.exe" in box.firewall.text(), timeout=20_000)
    assert not box.keep_local.isVisibleTo(box)
    cancelled = rules.replace(r"C:\users\ana\appdata\local\programs\python\python311\python.exe",
                              r"C:\program files\gguf launcher\gguf-launcher.exe")
    netsh.write_text(cancelled, encoding="utf-8")
    qtbot.waitUntil(lambda: "blocks gguf-launcher.exe on Public networks" in box.firewall.text(), timeout=20_000)
    assert box.keep_local.isVisibleTo(box)
    box.enabled.setChecked(False)
    assert box.firewall.text() == "" and not box.keep_local.isVisibleTo(box)
    supervisor.close()


def test_nothing_is_said_or_run_for_this_computer_only(qtbot, tiny_model, tmp_path, monkeypatch):
    box = ShareBox()
    qtbot.addWidget(box)
    box.windows = True
    asked: list[tuple[str, int]] = []
    box.firewall_check = lambda host, port: asked.append((host, port)) or check_share_firewall(host, port)
    supervisor = Supervisor(LaunchConfig(model=str(tiny_model), port=find_free_port()))
    box.set_supervisor(supervisor)
    box.port.setValue(find_free_port())
    box.enabled.setChecked(True)
    assert box.share is not None and box.share.settings.host == LOOPBACK
    assert asked == [] and not box.firewall.isVisibleTo(box) and "Windows may ask" not in box.warning.text()
    supervisor.close()
