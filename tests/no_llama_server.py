"""A computer where llama-server cannot run: none on PATH or in the usual places, and the one the app's set-up
installed is gone (as an antivirus program's quarantine leaves it). The real discovery code runs; only where it
looks is pointed at empty places."""

from __future__ import annotations

from pathlib import Path

import pytest


def hide_llama_server(monkeypatch: pytest.MonkeyPatch, empty: Path) -> None:
    from app.core.launch import discovery

    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("GGUF_LAUNCHER_LLAMA_SERVER", raising=False)
    monkeypatch.setattr(discovery, "common_locations", lambda: [])
    monkeypatch.setattr(discovery, "shipped_llama_server", lambda: None)
