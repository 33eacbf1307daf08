"""Checks on where a model file lives: exists, readable, non-empty, safe characters, local drive."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from app.core.paths import data_dir
from app.core.problem import Check, Fix, FixAction, Status, fix_action
from app.core.text import T

NETWORK_FS = {"nfs", "nfs4", "cifs", "smb3", "smbfs", "ceph", "glusterfs", "afs", "davfs", "sshfs", "9p"}
REMOVABLE_ROOTS = ("/media/", "/run/media/", "/Volumes/")


def _is_safe_text(text: str) -> bool:
    return text.isascii() and " " not in text


def safe_model_dir() -> Path:
    """A folder whose full path is plain ASCII without spaces, for copies of badly-placed models."""
    candidates = [data_dir() / "models", Path.home() / "gguf-models"]
    candidates.append(Path("C:/gguf-models") if sys.platform == "win32" else Path("/var/tmp/gguf-models"))
    for candidate in candidates:
        if _is_safe_text(str(candidate)):
            return candidate
    return candidates[-1]


def _copy_action(path: Path) -> FixAction:
    return fix_action(Fix.COPY_TO_SAFE_PATH, path=str(path), suggested_dir=str(safe_model_dir()))


def existence_check(path: Path) -> Check:
    """Error when the path is missing, a folder, unreadable or empty; otherwise ok."""
    pick = T("Choose the .gguf file itself.", "请选择 .gguf 文件本身。")
    if not path.exists():
        return Check("path", Status.ERROR, T("The file {path} does not exist.", "文件 {path} 不存在。", path=str(path)),
                     T("Check the path, or pick the file again.", "请检查路径，或重新选择文件。"))
    if path.is_dir():
        return Check("path", Status.ERROR, T("{path} is a folder, not a model file.", "{path} 是文件夹，不是模型文件。",
                                             path=str(path)), pick)
    if not os.access(path, os.R_OK):
        return Check("path", Status.ERROR, T("You do not have permission to read {path}.", "您没有读取 {path} 的权限。",
                                             path=str(path)),
                     T("Ask the file's owner for access, or fix its permissions.",
                       "请向文件所有者申请访问权限，或修改其权限。"))
    if path.stat().st_size == 0:
        return Check("path", Status.ERROR,
                     T("{path} is empty (0 bytes).", "{path} 是空文件（0 字节）。", path=str(path)),
                     T("The download failed; download the model again.", "下载失败；请重新下载模型。"))
    return Check("path", Status.OK, T("The file exists and is readable.", "文件存在且可读。"))


def characters_check(path: Path, platform: str = sys.platform) -> Check:
    """Non-ASCII characters or spaces break some Windows builds and tools; elsewhere they are fine."""
    text = str(path.resolve())
    if platform != "win32":
        if text.isascii():
            return Check("path_chars", Status.OK, T("The path uses plain characters.", "路径只含普通字符。"))
        return Check("path_chars", Status.OK, T("The path contains non-ASCII characters; that is fine on this system.",
                                                "路径中包含非 ASCII 字符；在本系统上没有问题。"), evidence=(text,))
    copy = T("Copy the model to {dir}.", "请把模型复制到 {dir}。", dir=str(safe_model_dir()))
    if not text.isascii():
        return Check("path_chars", Status.WARNING,
                     T("The path contains non-ASCII characters; some llama.cpp builds on Windows cannot open it.",
                       "路径中包含非 ASCII 字符；Windows 上的部分 llama.cpp 版本无法打开。"),
                     copy, evidence=(text,), action=_copy_action(path))
    if " " in text:
        return Check("path_chars", Status.WARNING,
                     T("The path contains spaces; some tools split it into pieces.",
                       "路径中包含空格；部分工具会把它拆开。"),
                     copy, evidence=(text,), action=_copy_action(path))
    return Check("path_chars", Status.OK, T("The path uses plain characters.", "路径只含普通字符。"))


def _unescape_mount(field: str) -> str:
    return field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def linux_mount_of(path: Path, mounts_text: str) -> tuple[str, str]:
    """(mount point, fs type) of the mount that holds ``path``, from /proc/mounts text."""
    target = str(path.resolve())
    best = ("/", "")
    for line in mounts_text.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        point, fstype = _unescape_mount(fields[1]), fields[2]
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best[0]):
            best = (point, fstype)
    return best


def classify_mount(point: str, fstype: str) -> str:
    """'network', 'windows_drive' (WSL), 'removable' or 'local'."""
    if fstype in ("drvfs",) or (fstype == "9p" and point.startswith("/mnt/")):
        return "windows_drive"
    if fstype in NETWORK_FS or fstype.startswith("fuse.") and fstype not in ("fuse.portal",):
        return "network"
    if any((point + "/").startswith(root) for root in REMOVABLE_ROOTS):
        return "removable"
    return "local"


def _windows_drive_kind(path: Path) -> str:
    import ctypes

    if sys.platform != "win32":  # kernel32 exists there only
        return "local"

    anchor = path.resolve().anchor
    if anchor.startswith("\\\\") and not anchor.startswith("\\\\?\\"):
        return "network"
    kind = ctypes.windll.kernel32.GetDriveTypeW(anchor)
    return {2: "removable", 4: "network"}.get(kind, "local")


def drive_kind(path: Path) -> str:
    if sys.platform == "win32":
        return _windows_drive_kind(path)
    if sys.platform == "darwin":
        return "removable" if str(path.resolve()).startswith("/Volumes/") else "local"
    try:
        mounts = Path("/proc/mounts").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "local"
    return classify_mount(*linux_mount_of(path, mounts))


def drive_check(path: Path) -> Check:
    kind = drive_kind(path)
    copy = T("Copy the model to a local disk, e.g. {dir}.", "请把模型复制到本地磁盘，例如 {dir}。",
             dir=str(safe_model_dir()))
    messages = {
        "network": T("The model is on a network drive: loading is slow and a dropped connection crashes the server.",
                     "模型位于网络驱动器上：加载很慢，且连接中断会导致服务器崩溃。"),
        "removable": T("The model is on a removable drive: unplugging it while the model runs crashes the server.",
                       "模型位于可移动磁盘上：运行时拔出磁盘会导致服务器崩溃。"),
        "windows_drive": T("The model is on a Windows drive seen from WSL: loading it is much slower than from the "
                           "Linux disk.",
                           "模型位于 WSL 中的 Windows 磁盘上：加载速度比 Linux 磁盘慢得多。"),
    }
    if kind in messages:
        return Check("path_drive", Status.WARNING, messages[kind], copy, evidence=(kind,), action=_copy_action(path))
    return Check("path_drive", Status.OK, T("The model is on a local disk.", "模型位于本地磁盘。"))


def path_checks(path: str | os.PathLike[str]) -> list[Check]:
    """All path checks; when the file itself is unusable only that error is returned."""
    file = Path(path)
    first = existence_check(file)
    if first.status is Status.ERROR:
        return [first]
    return [first, characters_check(file), drive_check(file)]
