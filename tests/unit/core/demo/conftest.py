"""Fixtures for the demo-model tests: pip without this machine's configuration, and model bytes to ship."""

from __future__ import annotations

import pytest

from tests.unit.core.demo.wheels import hermetic_pip_env


@pytest.fixture
def hermetic_pip(monkeypatch):
    hermetic_pip_env(monkeypatch)


@pytest.fixture(scope="session")
def model_bytes(tiny_model) -> bytes:
    """A real (random-weight) GGUF that llama.cpp loads, standing in for SmolLM2 inside test wheels."""
    return tiny_model.read_bytes()
