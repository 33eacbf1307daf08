"""Fixtures for tests that talk to the fake Hub: import them into a test module (``from tests.hub.fixtures import
fake_hub, hub_files``)."""

from __future__ import annotations

import pytest

from tests.hub.fake_hub import FakeHub, FakeRepo
from tests.hub.repos import tiny_repo_files

TINY = "test/tiny-llama-GGUF"
GATED = "test/gated-llama-GGUF"
PRIVATE = "test/private-llama-GGUF"
TOKEN = "hf_test_accepted"


@pytest.fixture(scope="session")
def hub_files(tmp_path_factory):
    """The tiny repository's real files (generated once per session; shared, do not modify)."""
    return tiny_repo_files(tmp_path_factory.mktemp("hub-repo"))


@pytest.fixture
def fake_hub(hub_files):
    """A running fake Hub with a public, a gated and a private copy of the tiny repository (and a projector)."""
    projector = {"mmproj-tiny-F16.gguf": hub_files["tiny-llama-F16.gguf"]}
    with FakeHub() as hub:
        hub.add(FakeRepo(TINY, dict(hub_files) | projector, downloads=50))
        hub.add(FakeRepo(GATED, {k: v for k, v in hub_files.items() if "/" not in k}, gated=True,
                         allowed_tokens=(TOKEN,), downloads=10))
        hub.add(FakeRepo(PRIVATE, dict(hub_files), private=True, allowed_tokens=(TOKEN,)))
        yield hub
