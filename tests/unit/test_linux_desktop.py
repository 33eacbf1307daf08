"""Linux desktop integration: the menu entry and AppStream metadata pass Debian's validators, and
installers/linux/install.sh puts a bundle, its menu entry and icons into a home folder and takes them out again."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.paths import ROOT

DESKTOP = ROOT / "packaging" / "gguf-launcher.desktop"
METAINFO = ROOT / "packaging" / "io.github.gguf_launcher.metainfo.xml"
INSTALL_SH = ROOT / "installers" / "linux" / "install.sh"
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
VALIDATORS = {"desktop-file-validate": "desktop-file-utils", "appstreamcli": "appstream"}


def validator(name: str) -> str:
    """The validator's path; a missing one fails the test (the test set-up installs both where it can)."""
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is missing, so the desktop files cannot be checked: sudo apt-get install "
                    f"{VALIDATORS[name]} (scripts/setup.sh test installs it itself when run as root with apt-get)")
    return path


def validate_desktop(path: Path) -> None:
    result = subprocess.run([validator("desktop-file-validate"), str(path)], capture_output=True, text=True)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def test_desktop_entry_passes_desktop_file_validate():
    validate_desktop(DESKTOP)


def test_metainfo_passes_appstreamcli_validate():
    result = subprocess.run([validator("appstreamcli"), "validate", "--pedantic", "--no-net", str(METAINFO)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "W:" not in result.stdout and "E:" not in result.stdout, result.stdout


def fake_bundle(folder: Path) -> Path:
    """What packaging/build-bundle.sh makes, in miniature: the program and a data folder beside it."""
    (folder / "_internal").mkdir(parents=True)
    (folder / "_internal" / "data.txt").write_text("bundle data\n")
    program = folder / "gguf-launcher"
    program.write_text('#!/bin/sh\necho "bundle program: $*"\n')
    program.chmod(0o755)
    return folder


def run_install(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "PREFIX"} | {"HOME": str(home)}
    return subprocess.run(["bash", str(INSTALL_SH), *args], capture_output=True, text=True, env=env, timeout=60)


def files_under(home: Path) -> set[str]:
    return {str(path.relative_to(home)) for path in home.rglob("*") if not path.is_dir()}


def test_install_places_bundle_menu_entry_and_icons_and_uninstall_removes_them(tmp_path):
    home = tmp_path / "home"
    user_data = home / ".local" / "share" / "gguf-launcher" / "settings.json"  # the app's own data folder
    user_data.parent.mkdir(parents=True)
    user_data.write_text("{}")
    before = files_under(home)
    bundle = fake_bundle(tmp_path / "dist" / "gguf-launcher")

    for _ in range(2):  # a second run upgrades in place
        result = run_install(home, str(bundle))
        assert result.returncode == 0, result.stderr
    local = home / ".local"
    app_dir = local / "lib" / "gguf-launcher"
    assert (app_dir / "_internal" / "data.txt").read_text() == "bundle data\n"
    launcher = local / "bin" / "gguf-launcher"
    ran = subprocess.run([str(launcher), "--version"], capture_output=True, text=True, timeout=10)
    assert ran.stdout == "bundle program: --version\n"
    desktop = local / "share" / "applications" / "gguf-launcher.desktop"
    validate_desktop(desktop)
    assert f'Exec="{app_dir}/gguf-launcher"\n' in desktop.read_text()
    assert "Icon=io.github.gguf_launcher\n" in desktop.read_text()
    icons = local / "share" / "icons" / "hicolor"
    assert (icons / "scalable" / "apps" / "io.github.gguf_launcher.svg").read_bytes() == (
        ROOT / "resources" / "icons" / "gguf-launcher.svg").read_bytes()
    for size in ICON_SIZES:
        assert (icons / f"{size}x{size}" / "apps" / "io.github.gguf_launcher.png").is_file()
    assert (local / "share" / "metainfo" / "io.github.gguf_launcher.metainfo.xml").is_file()
    assert f"{app_dir}/uninstall.sh" in result.stdout

    # The installed copy uninstalls without arguments, so the downloaded archive is not needed for it.
    env = {key: value for key, value in os.environ.items() if key != "PREFIX"} | {"HOME": str(home)}
    result = subprocess.run(["bash", str(app_dir / "uninstall.sh")], capture_output=True, text=True, env=env,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert files_under(home) == before  # everything installed is gone; the user's settings stay
    assert not app_dir.exists() and not icons.exists()
    assert run_install(home, "--uninstall").returncode == 0  # nothing left to remove is fine


def test_install_without_a_bundle_says_how_to_get_one(tmp_path):
    result = run_install(tmp_path / "home", str(tmp_path / "nothing-here"))
    assert result.returncode == 1
    assert "No GGUF Launcher bundle in" in result.stderr and "packaging/build-bundle.sh" in result.stderr
    assert not (tmp_path / "home" / ".local" / "lib" / "gguf-launcher").exists()
    assert run_install(tmp_path / "home", "--bogus").returncode == 2


def test_an_unpacked_archive_installs_itself_with_the_script_inside_it(tmp_path):
    """The layout the download can carry: install.sh at the bundle's top, the menu entry, metadata and icons in
    its _internal/ folder (PyInstaller's data folder). No source tree is needed."""
    bundle = fake_bundle(tmp_path / "gguf-launcher")
    shutil.copy2(INSTALL_SH, bundle / "install.sh")
    (bundle / "_internal" / "packaging").mkdir()
    for name in (DESKTOP, METAINFO):
        shutil.copy2(name, bundle / "_internal" / "packaging" / name.name)
    shutil.copytree(ROOT / "resources" / "icons", bundle / "_internal" / "resources" / "icons")
    home = tmp_path / "home"
    env = {key: value for key, value in os.environ.items() if key != "PREFIX"} | {"HOME": str(home)}
    result = subprocess.run(["bash", str(bundle / "install.sh")], capture_output=True, text=True, env=env,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    validate_desktop(home / ".local" / "share" / "applications" / "gguf-launcher.desktop")
    assert (home / ".local" / "lib" / "gguf-launcher" / "install.sh").is_file()
    icons = home / ".local" / "share" / "icons" / "hicolor"
    assert (icons / "48x48" / "apps" / "io.github.gguf_launcher.png").is_file()
