"""A port Windows reserves (WSAEACCES, 10013) told as what it is, not as "in use by another program".

Recordings (tests/data/windows/):
- llamastash_30_wsaeacces.txt — llamastash/llamastash#30 ("proxy   unbound 127.0.0.1:11435 (An attempt was made to
  access a socket in a way forbidden by its access permissions. (os error 10013))"; the reporter: "port 11435 was not
  in use when checked with: netstat -ano | findstr :11435").
- clash_verge_1688_wsaeacces.txt and clash_verge_1688_excludedportrange*.txt — clash-verge-rev/clash-verge-rev#1688
  (mihomo: "listen tcp :1258: bind: An attempt was made to access a socket in a way forbidden by its access
  permissions."; `netsh interface ipv4 show excludedportrange protocol=tcp` with Hyper-V on lists 1161–1260, and the
  same command in Chinese with no range before Hyper-V was turned on). localsend/localsend#125 shows the same table.
- Chinese Windows' text of 10013, "以一种访问权限不允许的方式做了一个访问套接字的尝试": kjtsune/embyToLocalPlayer#73.
"""

from __future__ import annotations

import pytest

from app.core.diagnosis import diagnose
from app.core.launch import ports
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import busy_port_note, parse_excluded_ranges, reserved_port_range
from tests.paths import ROOT

RECORDINGS = ROOT / "tests" / "data" / "windows"
NETSH = (RECORDINGS / "clash_verge_1688_excludedportrange.txt").read_text(encoding="utf-8")
NETSH_ZH_EMPTY = (RECORDINGS / "clash_verge_1688_excludedportrange_zh_empty.txt").read_text(encoding="utf-8")


def lines(name: str) -> list[str]:
    return (RECORDINGS / name).read_text(encoding="utf-8").splitlines()


def test_netsh_tables_are_read_in_any_language():
    ranges = parse_excluded_ranges(NETSH)
    assert ranges[0] == (1061, 1160) and (1161, 1260) in ranges and ranges[-1] == (50000, 50059)
    assert len(ranges) == 12
    assert parse_excluded_ranges(NETSH_ZH_EMPTY) == []
    assert reserved_port_range(1258, NETSH) == (1161, 1260)
    assert reserved_port_range(8080, NETSH) is None
    assert reserved_port_range(1258, NETSH_ZH_EMPTY) is None


@pytest.mark.parametrize("log", [
    lines("llamastash_30_wsaeacces.txt"),
    lines("clash_verge_1688_wsaeacces.txt"),
    ["ERROR:    [Errno 10013] error while attempting to bind on address ('127.0.0.1', 8080): "
     "以一种访问权限不允许的方式做了一个访问套接字的尝试。"],
])
def test_wsaeacces_is_a_reserved_port_and_the_app_picks_another(log):
    diagnosis = diagnose(1, log, LaunchConfig(model="m.gguf", port=8080))
    assert diagnosis.cause == "port_reserved"
    en, zh = diagnosis.message.render("en"), diagnosis.message.render("zh")
    assert "Windows does not let any program listen" in en and "in use by another program" not in en
    assert "Windows" in zh and "保留" in zh
    assert diagnosis.action is not None and diagnosis.action.changes == {"port": 0}
    assert any(words in diagnosis.evidence[0] for words in ("10013", "forbidden by its access", "以一种访问权限"))


def test_the_port_is_read_from_the_recorded_line():
    assert "11435" in diagnose(1, lines("llamastash_30_wsaeacces.txt"), None).message.render("en")
    assert "1258" in diagnose(1, lines("clash_verge_1688_wsaeacces.txt"), None).message.render("en")


def test_llama_servers_bare_bind_failure_on_a_reserved_port_names_the_range(monkeypatch):
    """llama-server says only "couldn't bind"; Windows' own table of reserved ranges is the evidence."""
    monkeypatch.setattr(ports, "_netsh_excluded_ranges", lambda: NETSH)
    log = ["couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 1258"]
    diagnosis = diagnose(1, log, LaunchConfig(model="m.gguf", port=1258))
    assert diagnosis.cause == "port_reserved"
    assert "1161–1260" in diagnosis.message.render("en") and "1161–1260" in diagnosis.message.render("zh")
    assert diagnosis.action is not None and diagnosis.action.changes == {"port": 0}


def test_a_bind_failure_outside_the_reserved_ranges_stays_a_busy_port(monkeypatch):
    monkeypatch.setattr(ports, "_netsh_excluded_ranges", lambda: NETSH)
    log = ["couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 8080"]
    assert diagnose(1, log, LaunchConfig(model="m.gguf", port=8080)).cause == "port_in_use"


def test_moving_off_a_reserved_port_says_why():
    note = busy_port_note(1258, 8081, (1161, 1260))
    assert "Windows reserves ports 1161–1260" in note.render("en") and "8081" in note.render("en")
    assert "in use by another program" not in note.render("en")
    assert "保留" in note.render("zh")
    busy = busy_port_note(8080, 8081, None)
    assert "in use by another program" in busy.render("en")


def test_settle_network_says_a_reserved_port_is_reserved(monkeypatch):
    """The start-up check binds for real: a port it cannot bind, in a range netsh lists, is moved off with the
    reserved-range sentence, not "in use by another program"."""
    import socket

    from app.core.launch.ports import settle_network

    with socket.socket() as holder:  # stands in for Windows' refusal: the bind of that port fails
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        monkeypatch.setattr(ports, "_netsh_excluded_ranges", lambda: f"      {port - 1}        {port + 1}\n")
        config, notes = settle_network(LaunchConfig(model="m.gguf", port=port))
    assert config.port != port
    assert len(notes) == 1 and f"Windows reserves ports {port - 1}–{port + 1}" in notes[0].render("en")
