"""An ASCII temporary folder for server children.

On Windows a user name with non-ASCII letters puts them into %TEMP% (C:\\Users\\田中\\AppData\\Local\\Temp; even its 8.3
short form keeps them), and llama.cpp builds that pass paths through the ANSI code page then cannot open what they
write there (LM Studio 0.4.20's chat-template file, lmstudio-bug-tracker#2231; koboldcpp's extracted files,
koboldcpp#2339). The child gets an ASCII folder instead: the app's own temporary folder when its path is ASCII, else
one under ProgramData (Windows) or /tmp. Only the child's environment changes; the app's own is left alone.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path

logger = logging.getLogger(__name__)

TEMP_KEYS = ("TEMP", "TMP", "TMPDIR")
_FOLDER = "gguf-launcher-tmp"


def _candidates() -> list[Path]:
    from app.core.paths import cache_dir

    places = [cache_dir() / "tmp"]
    if sys.platform == "win32":
        for root in (os.environ.get("ProgramData"), os.environ.get("PUBLIC"),
                     (os.environ.get("SystemDrive") or "C:") + "\\"):
            if root:
                places.append(Path(root) / _FOLDER)
    else:
        places.append(Path("/tmp") / _FOLDER)
    return places


def _usable(folder: Path) -> bool:
    if not str(folder).isascii():
        return False
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK | os.X_OK)


def ascii_temp_dir() -> Path | None:
    """The first ASCII folder the child can write to, created if needed; None when there is none."""
    for folder in _candidates():
        if _usable(folder):
            return folder
    return None


def with_ascii_temp(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with every temporary-folder variable that is not ASCII pointed at an ASCII folder (unchanged when all
    are ASCII, or when no ASCII folder can be had: then the child fails as it would have, and the log says so)."""
    result = dict(env)
    bad = [key for key in TEMP_KEYS if key in result and not result[key].isascii()]
    if not bad:
        return result
    folder = ascii_temp_dir()
    if folder is None:
        logger.warning("the temporary folder %r is not ASCII and no ASCII folder is writable", result[bad[0]])
        return result
    for key in bad:
        result[key] = str(folder)
    logger.info("server child: %s set to %s (the user's temporary folder is not ASCII)", ", ".join(bad), folder)
    return result
