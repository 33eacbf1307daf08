"""Where the app keeps its files. ``GGUF_LAUNCHER_HOME`` moves all of them (tests use it)."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "gguf-launcher"


def _dir(kind: str) -> Path:
    home = os.environ.get("GGUF_LAUNCHER_HOME")
    if home:
        path = Path(home) / kind
    else:
        getter = {
            "config": platformdirs.user_config_dir,
            "data": platformdirs.user_data_dir,
            "cache": platformdirs.user_cache_dir,
            "log": platformdirs.user_log_dir,
        }[kind]
        path = Path(getter(APP_NAME, appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def config_dir() -> Path:
    return _dir("config")


def data_dir() -> Path:
    return _dir("data")


def cache_dir() -> Path:
    return _dir("cache")


def log_dir() -> Path:
    return _dir("log")
