"""Before the window opens: does the Qt platform plugin that will be used find every system library it needs?

Without this, a missing ``libxcb-cursor.so.0`` (fresh Ubuntu desktops lack it) ends the first run in Qt's own
abort. Here the plugin Qt will pick is chosen the way Qt picks it, its dependency tree is followed like the
dynamic loader follows it (``loader.py``), and what is missing becomes two lines: the names, and the install
command for this distribution. Linux only; anything that cannot be judged (no plugin file, not an ELF) passes.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.core.platform.loader import missing_libraries
from app.core.problem import UserError
from app.core.text import T, Text

SEARCH_ENV = "GGUF_LAUNCHER_QT_LIBRARY_PATH"  # colon-separated: search only these instead of the system's folders

# soname -> (Debian/Ubuntu package, Fedora package). The platform plugins' own needs and Qt's, as of Qt 6.8.
PACKAGES: dict[str, tuple[str, str]] = {
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util"),
    "libxcb.so.1": ("libxcb1", "libxcb"),
    "libxcb-glx.so.0": ("libxcb-glx0", "libxcb"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb"),
    "libxcb-xinerama.so.0": ("libxcb-xinerama0", "libxcb"),
    "libxcb-xinput.so.0": ("libxcb-xinput0", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libX11.so.6": ("libx11-6", "libX11"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb"),
    "libXau.so.6": ("libxau6", "libXau"),
    "libXdmcp.so.6": ("libxdmcp6", "libXdmcp"),
    "libXext.so.6": ("libxext6", "libXext"),
    "libXrender.so.1": ("libxrender1", "libXrender"),
    "libSM.so.6": ("libsm6", "libSM"),
    "libICE.so.6": ("libice6", "libICE"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl"),
    "libGL.so.1": ("libgl1", "libglvnd-glx"),
    "libGLX.so.0": ("libglx0", "libglvnd-glx"),
    "libOpenGL.so.0": ("libopengl0", "libglvnd-opengl"),
    "libGLdispatch.so.0": ("libglvnd0", "libglvnd"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype"),
    "libharfbuzz.so.0": ("libharfbuzz0b", "harfbuzz"),
    "libpng16.so.16": ("libpng16-16", "libpng"),
    "libz.so.1": ("zlib1g", "zlib"),
    "libexpat.so.1": ("libexpat1", "expat"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libgthread-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libgobject-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libgio-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs"),
    "libwayland-client.so.0": ("libwayland-client0", "libwayland-client"),
    "libwayland-cursor.so.0": ("libwayland-cursor0", "libwayland-cursor"),
    "libwayland-egl.so.1": ("libwayland-egl1", "libwayland-egl"),
    "libdrm.so.2": ("libdrm2", "libdrm"),
    "libgbm.so.1": ("libgbm1", "mesa-libgbm"),
    "libbsd.so.0": ("libbsd0", "libbsd"),
    "libmd.so.0": ("libmd0", "libmd"),
    "libuuid.so.1": ("libuuid1", "libuuid"),
    "libstdc++.so.6": ("libstdc++6", "libstdc++"),
    "libgcc_s.so.1": ("libgcc-s1", "libgcc"),
}
_INSTALL = {"debian": "sudo apt-get install", "fedora": "sudo dnf install"}


def platform_candidates(env: Mapping[str, str] = os.environ) -> list[str]:
    """The platform plugins Qt will try, in order: QT_QPA_PLATFORM ("wayland;xcb" is a fallback list, ":opts"
    are arguments), else Wayland first in a Wayland session, else xcb (Qt's default on Linux)."""
    requested = env.get("QT_QPA_PLATFORM", "").strip()
    if requested:
        return [part.split(":", 1)[0].strip() for part in requested.split(";") if part.strip()]
    if env.get("WAYLAND_DISPLAY") or env.get("XDG_SESSION_TYPE", "").lower() == "wayland":
        return ["wayland", "xcb"]
    return ["xcb"]


def platforms_dir(env: Mapping[str, str] = os.environ) -> Path | None:
    """Qt's platform plugin folder, found from PySide6's package folder without importing it."""
    override = env.get("QT_QPA_PLATFORM_PLUGIN_PATH")
    if override:
        return Path(override)
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "Qt" / "plugins" / "platforms"


def plugin_file(folder: Path, name: str) -> Path | None:
    for candidate in (f"libq{name}.so", f"libq{name}-generic.so", f"libq{name}-egl.so"):
        if (folder / candidate).is_file():
            return folder / candidate
    return None


@dataclass(frozen=True)
class MissingLibraries:
    platform: str  # the Qt platform plugin that cannot load ("xcb")
    names: tuple[str, ...]  # sonames, as DT_NEEDED spells them

    def problem(self, family: str | None) -> UserError:
        names = ", ".join(self.names)
        return UserError(
            T("The window cannot open: Qt's {platform} display plugin needs system libraries that are missing "
              "({names}).", "无法打开窗口：Qt 的 {platform} 显示插件需要的系统库缺失（{names}）。",
              platform=self.platform, names=names),
            install_line(self.names, family))


@dataclass(frozen=True)
class NoDisplay:
    """Qt would try xcb with no X server to talk to (an ssh session, a server): its abort, said in two lines."""

    def problem(self, family: str | None) -> UserError:
        return UserError(
            T("The window cannot open: there is no display here (neither DISPLAY nor WAYLAND_DISPLAY is set).",
              "无法打开窗口：这里没有显示器（DISPLAY 和 WAYLAND_DISPLAY 都未设置）。"),
            T("Start it from the desktop (or over ssh -X); the command-line tools work here (for example "
              "gguf-launcher scan).",
              "请在桌面上启动（或通过 ssh -X）；命令行工具在这里可用（例如 gguf-launcher scan）。"))


def install_line(names: Sequence[str], family: str | None) -> Text:
    column = {"debian": 0, "fedora": 1}.get(family or "")
    known = [PACKAGES[name] for name in names if name in PACKAGES]
    unknown = [name for name in names if name not in PACKAGES]
    if column is None:
        debian = " ".join(dict.fromkeys(pair[0] for pair in known)) or "…"
        fedora = " ".join(dict.fromkeys(pair[1] for pair in known)) or "…"
        return T("Install them with your system's package manager (Debian/Ubuntu: sudo apt-get install {debian}; "
                 "Fedora: sudo dnf install {fedora}), then start the app again.",
                 "请用系统的软件包管理器安装它们（Debian/Ubuntu：sudo apt-get install {debian}；"
                 "Fedora：sudo dnf install {fedora}），然后重新启动程序。", debian=debian, fedora=fedora)
    command = " ".join([_INSTALL[family or ""], *dict.fromkeys(pair[column] for pair in known)])
    if unknown:
        return T("Run: {command} (and install the package that provides {unknown}), then start the app again.",
                 "请运行：{command}（并安装提供 {unknown} 的软件包），然后重新启动程序。",
                 command=command, unknown=", ".join(unknown))
    return T("Run: {command} — then start the app again.", "请运行：{command}，然后重新启动程序。", command=command)


def distro_family(os_release: Path = Path("/etc/os-release")) -> str | None:
    """'debian' (Debian, Ubuntu, Mint, ...), 'fedora' (Fedora, RHEL, CentOS, Rocky, Alma) or None."""
    fields: dict[str, str] = {}
    try:
        for line in os_release.read_text(encoding="utf-8", errors="replace").splitlines():
            key, sep, value = line.partition("=")
            if sep:
                fields[key.strip()] = value.strip().strip("\"'")
    except OSError:
        return None
    ids = {fields.get("ID", "").lower(), *fields.get("ID_LIKE", "").lower().split()}
    if ids & {"debian", "ubuntu"}:
        return "debian"
    if ids & {"fedora", "rhel", "centos"}:
        return "fedora"
    return None


def has_display(env: Mapping[str, str] = os.environ) -> bool:
    """Whether Qt's default choice has a display to connect to (a platform that was asked for is Qt's business)."""
    return bool(env.get("QT_QPA_PLATFORM", "").strip() or env.get("DISPLAY") or env.get("WAYLAND_DISPLAY")
                or env.get("XDG_SESSION_TYPE", "").lower() == "wayland")


def check(env: Mapping[str, str] = os.environ, *,
          search: Sequence[Path] | None = None) -> MissingLibraries | NoDisplay | None:
    """What keeps every platform Qt would try from loading (the first one's names), or None when one can load."""
    if not sys.platform.startswith("linux"):
        return None
    if not has_display(env):
        return NoDisplay()
    if search is None and env.get(SEARCH_ENV):
        search = [Path(part) for part in env[SEARCH_ENV].split(os.pathsep) if part]
    folder = platforms_dir(env)
    if folder is None:
        return None
    first: MissingLibraries | None = None
    for name in platform_candidates(env):
        plugin = plugin_file(folder, name)
        if plugin is None:
            return None  # a plugin we cannot judge: Qt tries it and speaks for itself
        try:
            missing = missing_libraries(plugin, search=search, env=env)
        except FileNotFoundError:
            return None
        if not missing:
            return None
        first = first or MissingLibraries(name, tuple(missing))
    return first
