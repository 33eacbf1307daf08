"""The fast lane (`./test -m "not slow"`, under a minute): tests that start real servers, build, fetch or load
many models are marked slow here by what they use, so nobody has to remember the marker on each one."""

from __future__ import annotations

from pathlib import Path

import pytest

SLOW_FOLDERS = ("integration",)
# Fixtures that start a real server or the real llama-server binary.
SLOW_FIXTURES = frozenset({"running_server", "server_config", "llama_server_bin", "fake_server_bin",
                           "smollm2_model", "quantized_models", "real_window_server"})


def pytest_collection_modifyitems(config, items) -> None:
    root = Path(__file__).resolve().parent
    for item in items:
        try:
            parts = Path(item.fspath).resolve().relative_to(root).parts
        except ValueError:
            continue
        uses = set(getattr(item, "fixturenames", ()))
        if (parts and parts[0] in SLOW_FOLDERS) or uses & SLOW_FIXTURES:
            item.add_marker(pytest.mark.slow)
