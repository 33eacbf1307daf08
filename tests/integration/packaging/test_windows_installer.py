"""installers/windows/gguf-launcher.nsi compiles with NSIS's makensis (which runs on Linux too) against a stand-in
for the Windows bundle, so a typo in the script cannot ship; a bundle that lacks a piece stops the compile."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from app import __version__
from tests.paths import ROOT

SCRIPT = ROOT / "installers" / "windows" / "gguf-launcher.nsi"
APT_TIMEOUT_S = 600
# PyInstaller's Windows one-folder layout (packaging/gguf-launcher.spec): two programs and _internal/
WINDOWS_BUNDLE = ("gguf-launcher.exe", "gguf-launcher-cli.exe", "_internal/python311.dll", "_internal/base_library.zip",
                  "_internal/llama_cpp/lib/llama.dll", "_internal/resources/translations/gguf_launcher_zh_CN.qm")


def _apt_install_nsis() -> list[str]:
    """What apt said, when this machine lets the suite install Debian's nsis (root with apt-get, as CI is)."""
    if not shutil.which("apt-get") or getattr(os, "geteuid", lambda: -1)() != 0:
        return ["not root with apt-get here"]
    said = []
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = ["apt-get", "install", "-y", "-q", "-o", "DPkg::Lock::Timeout=300", "nsis"]
    for argv in (install, ["apt-get", "update", "-q"], install):  # a stale package list: update once, then retry
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=APT_TIMEOUT_S)
        said += done.stdout.splitlines()[-3:] + done.stderr.splitlines()[-3:]
        if shutil.which("makensis"):
            break
    return said


@pytest.fixture(scope="session")
def makensis() -> str:
    """The compiler, installed here when missing; a machine that cannot have it fails the test (never a skip)."""
    said = [] if shutil.which("makensis") else _apt_install_nsis()
    found = shutil.which("makensis")
    if not found:
        pytest.fail("makensis is needed to compile the Windows installer and could not be installed: "
                    "run `apt-get install nsis` (Debian/Ubuntu) or install NSIS 3. apt said:\n" + "\n".join(said))
    return found


def fake_bundle(folder: Path, leave_out: str = "") -> Path:
    for name in WINDOWS_BUNDLE:
        if name != leave_out:
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(b"MZ" + name.encode() * 200)
    return folder


def compile_installer(makensis: str, source: Path, out: Path) -> subprocess.CompletedProcess:
    # -WX: a warning (an unused variable, a misspelt define that falls back) fails the compile too
    return subprocess.run([makensis, "-V4", "-WX", f"-DVERSION={__version__}", f"-DSOURCE_DIR={source}",
                           f"-DOUT_FILE={out}", str(SCRIPT)], capture_output=True, text=True, timeout=120)


def test_installer_compiles_and_installs_the_whole_bundle(makensis, tmp_path):
    out = tmp_path / f"gguf-launcher-{__version__}-windows-x86_64-setup.exe"
    done = compile_installer(makensis, fake_bundle(tmp_path / "gguf-launcher"), out)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert out.read_bytes()[:2] == b"MZ"
    log = done.stdout
    for name in WINDOWS_BUNDLE:
        assert f'File: "{Path(name).name}"' in log, name
    assert 'CreateShortcut: "$SMPROGRAMS\\GGUF Launcher.lnk"->"$INSTDIR\\gguf-launcher.exe"' in log
    assert 'WriteUninstaller: "$INSTDIR\\uninstall.exe"' in log
    assert f"DisplayVersion={__version__}" in log
    assert 'InstallDir: "$PROGRAMFILES64\\GGUF Launcher"' in log
    uninstall = log.split('Section: "Uninstall"')[1]
    assert 'Delete: "$SMPROGRAMS\\GGUF Launcher.lnk"' in uninstall and 'RMDir: "$INSTDIR"' in uninstall
    assert 'RMDir: /r "$INSTDIR"\n' not in uninstall  # never the whole folder: the user may have chosen a busy one


@pytest.mark.parametrize("missing", ["gguf-launcher.exe", "gguf-launcher-cli.exe"])
def test_a_bundle_without_its_program_does_not_compile(makensis, tmp_path, missing):
    done = compile_installer(makensis, fake_bundle(tmp_path / "gguf-launcher", missing), tmp_path / "x-setup.exe")
    assert done.returncode != 0 and f"{missing} is missing" in done.stdout + done.stderr
    assert not (tmp_path / "x-setup.exe").exists()
