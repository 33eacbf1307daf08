"""Where other apps keep their models, on Linux, macOS and Windows. Every place is a candidate: a missing folder is
normal (the app is not installed). ``env`` and ``home`` are parameters so tests point at a fake home."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from app.core.bounded_json import read_json
from app.core.gguf.path_checks import safe_model_dir

# How a folder is read: "ollama" (manifests + blobs), "hf" (hub cache: models--org--name/snapshots/*),
# "tree" (any *.gguf below it, a few levels deep).
OLLAMA, HF, TREE = "ollama", "hf", "tree"

APP_OLLAMA, APP_LM_STUDIO, APP_JAN, APP_HF, APP_LLAMA_CPP, APP_USER, APP_DOWNLOADS = (
    "ollama", "lm_studio", "jan", "huggingface", "llama_cpp", "folder", "downloads")


@dataclass(frozen=True)
class Source:
    app: str  # one of the APP_* names
    kind: str  # OLLAMA, HF or TREE
    path: Path


def home_dir(env: Mapping[str, str], platform: str = sys.platform) -> Path:
    names = ("USERPROFILE", "HOME") if platform.startswith("win") else ("HOME", "USERPROFILE")
    for name in names:
        if env.get(name):
            return Path(env[name])
    return Path.home()


def _env_path(env: Mapping[str, str], name: str) -> Path | None:
    value = env.get(name, "").strip()
    return Path(os.path.expanduser(value)) if value else None


def _cache_dir(env: Mapping[str, str], home: Path, platform: str) -> Path:
    return _env_path(env, "XDG_CACHE_HOME") or home / ".cache"


def _ollama(env: Mapping[str, str], home: Path) -> list[Source]:
    root = _env_path(env, "OLLAMA_MODELS") or home / ".ollama" / "models"
    return [Source(APP_OLLAMA, OLLAMA, root)]


def _lm_studio(env: Mapping[str, str], home: Path, platform: str) -> list[Source]:
    paths = [home / ".lmstudio" / "models", home / ".cache" / "lm-studio" / "models"]
    return [Source(APP_LM_STUDIO, TREE, p) for p in paths]


def _jan_settings_files(env: Mapping[str, str], home: Path, platform: str) -> list[Path]:
    if platform.startswith("win"):
        appdata = _env_path(env, "APPDATA") or home / "AppData" / "Roaming"
        return [appdata / "Jan" / "settings.json", home / "jan" / "settings" / "settings.json"]
    if platform == "darwin":
        return [home / "Library" / "Application Support" / "Jan" / "settings.json",
                home / "jan" / "settings" / "settings.json"]
    config = _env_path(env, "XDG_CONFIG_HOME") or home / ".config"
    return [config / "Jan" / "settings.json", home / "jan" / "settings" / "settings.json"]


def _jan_data_folder(settings_file: Path) -> Path | None:
    """``data_folder`` from Jan's settings file when it is a small JSON object that has one; None otherwise."""
    try:
        data = read_json(settings_file, max_bytes=64 * 1024)  # a regular file only: a FIFO hung the scan
    except (OSError, ValueError):
        return None
    folder = data.get("data_folder") if isinstance(data, dict) else None
    return Path(folder) if isinstance(folder, str) and folder.strip() else None


def _jan(env: Mapping[str, str], home: Path, platform: str) -> list[Source]:
    if platform.startswith("win"):
        data_dirs = [(_env_path(env, "APPDATA") or home / "AppData" / "Roaming") / "Jan" / "data"]
    elif platform == "darwin":
        data_dirs = [home / "Library" / "Application Support" / "Jan" / "data"]
    else:
        data_dirs = [(_env_path(env, "XDG_DATA_HOME") or home / ".local" / "share") / "Jan" / "data"]
    data_dirs.insert(0, home / "jan")
    for settings_file in _jan_settings_files(env, home, platform):
        folder = _jan_data_folder(settings_file)
        if folder is not None:
            data_dirs.insert(0, folder)
    paths: list[Path] = []
    for data in data_dirs:
        paths += [data / "models", data / "llamacpp" / "models"]
    return [Source(APP_JAN, TREE, p) for p in paths]


def _hugging_face(env: Mapping[str, str], home: Path, platform: str) -> list[Source]:
    hub = _env_path(env, "HF_HUB_CACHE") or _env_path(env, "HUGGINGFACE_HUB_CACHE")
    if hub is None:
        hf_home = _env_path(env, "HF_HOME") or _cache_dir(env, home, platform) / "huggingface"
        hub = hf_home / "hub"
    return [Source(APP_HF, HF, hub)]


def _llama_cpp(env: Mapping[str, str], home: Path, platform: str) -> list[Source]:
    own = _env_path(env, "LLAMA_CACHE")
    if own is not None:
        return [Source(APP_LLAMA_CPP, TREE, own)]
    if platform.startswith("win"):
        local = _env_path(env, "LOCALAPPDATA") or home / "AppData" / "Local"
        return [Source(APP_LLAMA_CPP, TREE, local / "llama.cpp")]
    if platform == "darwin":
        return [Source(APP_LLAMA_CPP, TREE, home / "Library" / "Caches" / "llama.cpp")]
    return [Source(APP_LLAMA_CPP, TREE, _cache_dir(env, home, platform) / "llama.cpp")]


def known_sources(env: Mapping[str, str] | None = None, home: str | os.PathLike[str] | None = None,
                  extra_folders: list[str] | tuple[str, ...] = (), platform: str = sys.platform) -> list[Source]:
    """Every place to look, in the order the list shows them; the same folder is listed once."""
    env = os.environ if env is None else env
    home = Path(home) if home is not None else home_dir(env, platform)
    # First: the folder "Get a model" downloads to.
    sources = ([Source(APP_DOWNLOADS, TREE, safe_model_dir())] + _ollama(env, home) + _lm_studio(env, home, platform)
               + _jan(env, home, platform) + _hugging_face(env, home, platform) + _llama_cpp(env, home, platform)
               + [Source(APP_USER, TREE, Path(os.path.expanduser(f))) for f in extra_folders if f and f.strip()])
    seen: set[str] = set()
    unique = []
    for source in sources:
        key = os.path.normcase(os.path.abspath(source.path))
        if key not in seen:
            seen.add(key)
            unique.append(source)
    return unique
