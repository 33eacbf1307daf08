"""The fast lane (`./test -m "not slow"`, under a minute): tests that start real servers, run the real pip, build,
fetch or load real models are marked slow here by what they use, so nobody has to remember the marker on each one.

Marked slow automatically: everything under tests/integration, and every test that uses one of SLOW_FIXTURES.
Where nothing a test asks for says it (a click on Start in the real window, the whole app in a child process, the
real engine self-test, a real time limit of a second or more waited out, any test of about a second or more on the
2-core VM), the test says so itself with ``@pytest.mark.slow``, or its module with
``pytestmark = pytest.mark.slow`` when the whole module is about real servers or pip."""

from __future__ import annotations

from pathlib import Path

import pytest

SLOW_FOLDERS = ("integration",)
SLOW_FIXTURES = frozenset({
    # a real server or the real llama-server binary
    "running_server", "server_config", "llama_server_bin", "fake_server_bin", "real_window_server",
    "chat_server",  # tests/ui/chat/test_chat_pane.py: one real embedded server per module
    # real models: fetched with pip, or quantized by llama.cpp
    "smollm2_model", "quantized_models",
    # the real pip in a child process (every test that runs it asks for a pip without this machine's config)
    "hermetic_pip",
})


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
