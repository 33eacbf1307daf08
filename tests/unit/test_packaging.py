"""Packaging files stay valid: desktop entry, AppStream metadata, PyInstaller spec, installers, Windows scripts
(the validators and the Linux install in a temporary home: test_linux_desktop.py)."""

from __future__ import annotations

import configparser
import subprocess
import xml.etree.ElementTree as ET

from tests.paths import ROOT

PACKAGING = ROOT / "packaging"
INSTALL_SH = ROOT / "installers" / "linux" / "install.sh"


def test_desktop_entry_parses_and_launches_the_command():
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keys are case-sensitive in desktop entries
    parser.read(PACKAGING / "gguf-launcher.desktop", encoding="utf-8")
    entry = parser["Desktop Entry"]
    assert entry["Type"] == "Application"
    assert entry["Exec"] == "gguf-launcher"
    assert entry["Name"] and entry["Name[zh_CN]"]
    assert entry["Categories"].endswith(";")


def test_metainfo_parses_and_points_at_the_desktop_entry():
    root = ET.parse(PACKAGING / "io.github.gguf_launcher.metainfo.xml").getroot()
    assert root.tag == "component" and root.get("type") == "desktop-application"
    assert root.findtext("id") == "io.github.gguf_launcher"
    assert root.findtext("launchable") == "gguf-launcher.desktop"
    assert root.find("provides/binary").text == "gguf-launcher"


def test_pyinstaller_spec_compiles_and_names_existing_paths():
    source = (PACKAGING / "gguf-launcher.spec").read_text(encoding="utf-8")
    compile(source, "gguf-launcher.spec", "exec")
    assert '"app" / "__main__.py"' in source and (ROOT / "app" / "__main__.py").is_file()
    assert (ROOT / "resources").is_dir()


def test_install_script_syntax():
    result = subprocess.run(["bash", "-n", str(INSTALL_SH)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_windows_scripts_mirror_the_linux_ones():
    setup = (ROOT / "scripts" / "setup.ps1").read_text(encoding="utf-8")
    assert '-e ".[test]"' in setup and "-m venv .venv" in setup
    assert '-e ".[server]"' in setup and "-m app.core.engine.shipped" in setup  # llama-server, checked, as setup.sh
    assert "-eq 3" in setup  # build.py's status when only llama-server failed
    assert '$stamp = ".venv\\.installed"' in setup and '$parts[1] -eq "test"' in setup  # one stamp, as setup.sh
    test_ps1 = (ROOT / "test.ps1").read_text(encoding="utf-8")
    assert "QT_QPA_PLATFORM" in test_ps1 and "-eq 5" in test_ps1
    for name in ("run", "test"):
        batch = (ROOT / f"{name}.bat").read_bytes()
        assert b"-ExecutionPolicy Bypass" in batch and f"{name}.ps1".encode() in batch
        assert b"\r\n" in batch  # cmd.exe wants CRLF line ends
