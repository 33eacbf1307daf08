import os
import subprocess
import sys

import pytest

from app.cli._output import report_user_error
from app.core.platform import qt_libs
from app.core.text import set_language
from tests.paths import ROOT

XCB = {"QT_QPA_PLATFORM": "xcb"}


def expected_install_line() -> str:
    family = qt_libs.distro_family()
    return {"debian": "Run: sudo apt-get install libxcb-cursor0 — then start the app again.",
            "fedora": "Run: sudo dnf install xcb-util-cursor — then start the app again."}.get(
        family, "Install them with your system's package manager (Debian/Ubuntu: sudo apt-get install "
                "libxcb-cursor0; Fedora: sudo dnf install xcb-util-cursor), then start the app again.")


def test_a_library_path_without_xcb_cursor_gives_two_lines(libs_without_cursor, capsys):
    set_language("en")
    missing = qt_libs.check(XCB, search=[libs_without_cursor])
    assert missing == qt_libs.MissingLibraries("xcb", ("libxcb-cursor.so.0",))
    assert report_user_error(missing.problem("debian")) == 1
    assert capsys.readouterr().err.splitlines() == [
        "error: The window cannot open: Qt's xcb display plugin needs system libraries that are missing "
        "(libxcb-cursor.so.0).",
        "next step: Run: sudo apt-get install libxcb-cursor0 — then start the app again."]
    assert missing.problem("fedora").next_step.render() == "Run: sudo dnf install xcb-util-cursor — then start " \
                                                           "the app again."
    assert "sudo apt-get install libxcb-cursor0" in missing.problem(None).next_step.render("zh")


def test_a_complete_library_path_passes(complete_libs):
    assert qt_libs.check(XCB, search=[complete_libs]) is None


@pytest.mark.slow  # the app in a child process, 1 s
def test_the_real_entry_point_prints_two_lines_and_exits_1(libs_without_cursor, tmp_path):
    env = {**os.environ, **XCB, qt_libs.SEARCH_ENV: str(libs_without_cursor), "GGUF_LAUNCHER_LANG": "en",
           "GGUF_LAUNCHER_HOME": str(tmp_path / "home")}
    result = subprocess.run([sys.executable, "-m", "app"], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines() == [
        "error: The window cannot open: Qt's xcb display plugin needs system libraries that are missing "
        "(libxcb-cursor.so.0).", f"next step: {expected_install_line()}"]
    assert result.stdout == ""


def test_wayland_falls_back_to_xcb_and_offscreen_needs_no_display_libraries(libs_without_cursor):
    assert qt_libs.check({"QT_QPA_PLATFORM": "offscreen"}, search=[libs_without_cursor]) is None
    # Qt tries wayland then xcb: one that loads is enough; when neither does, the first one is named.
    both = {"WAYLAND_DISPLAY": "wayland-0"}
    assert qt_libs.platform_candidates(both) == ["wayland", "xcb"]
    missing = qt_libs.check(both, search=[libs_without_cursor])
    assert missing is not None and missing.platform == "wayland"
    assert qt_libs.check({"QT_QPA_PLATFORM": "vnc-does-not-exist"}, search=[libs_without_cursor]) is None


@pytest.mark.parametrize(("env", "expected"), [
    ({}, ["xcb"]), ({"DISPLAY": ":0"}, ["xcb"]), ({"XDG_SESSION_TYPE": "wayland"}, ["wayland", "xcb"]),
    ({"QT_QPA_PLATFORM": "wayland;xcb", "DISPLAY": ":0"}, ["wayland", "xcb"]),
    ({"QT_QPA_PLATFORM": "xcb:nograb", "WAYLAND_DISPLAY": "w"}, ["xcb"]),
])
def test_the_platform_is_chosen_as_qt_chooses_it(env, expected):
    assert qt_libs.platform_candidates(env) == expected


@pytest.mark.parametrize(("text", "family"), [
    ('ID=debian\nVERSION_ID="12"\n', "debian"), ('ID=ubuntu\nID_LIKE=debian\n', "debian"),
    ('ID=linuxmint\nID_LIKE="ubuntu debian"\n', "debian"), ("ID=fedora\n", "fedora"),
    ('ID="rocky"\nID_LIKE="rhel centos fedora"\n', "fedora"), ("ID=arch\n", None), ("", None),
])
def test_the_distribution_family_comes_from_os_release(tmp_path, text, family):
    path = tmp_path / "os-release"
    path.write_text(text)
    assert qt_libs.distro_family(path) == family
    assert qt_libs.distro_family(tmp_path / "absent") is None


def test_install_line_maps_sonames_to_each_familys_packages():
    names = ["libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-shape.so.0",
             "libxcb-xkb.so.1"]
    assert qt_libs.install_line(names, "debian").render("en") == (
        "Run: sudo apt-get install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 libxcb-xkb1 — "
        "then start the app again.")
    assert qt_libs.install_line(names, "fedora").render("en") == (
        "Run: sudo dnf install xcb-util-cursor xcb-util-wm xcb-util-keysyms libxcb — then start the app again.")
    assert "libfoo.so.9" in qt_libs.install_line(["libxcb-cursor.so.0", "libfoo.so.9"], "debian").render("en")


def test_no_display_at_all_is_two_lines_too(capsys):
    set_language("en")
    assert qt_libs.check({}) == qt_libs.NoDisplay()
    assert qt_libs.check({"XDG_SESSION_TYPE": "wayland", "QT_QPA_PLATFORM": "offscreen"}) != qt_libs.NoDisplay()
    assert report_user_error(qt_libs.NoDisplay().problem("debian")) == 1
    assert capsys.readouterr().err.splitlines() == [
        "error: The window cannot open: there is no display here (neither DISPLAY nor WAYLAND_DISPLAY is set).",
        "next step: Start it from the desktop (or over ssh -X); the command-line tools work here (for "
        "example gguf-launcher scan)."]
