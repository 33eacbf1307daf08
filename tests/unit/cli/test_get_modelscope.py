"""`gguf-launcher search/get --source modelscope` against the fake ModelScope (--endpoint): a repository listed with
fit verdicts, a model downloaded, verified and checked, the ModelScope token read from MODELSCOPE_API_TOKEN (never
HF_TOKEN), and words answered with the one sentence that ModelScope is not searched by words."""

from __future__ import annotations

import json

import pytest

from app.cli import main
from tests.hub import fixtures
from tests.hub.fake_hub import FakeRepo
from tests.hub.fake_modelscope import FakeModelScope
from tests.hub.fixtures import PRIVATE, TINY
from tests.model_cache import sha256_of

hub_files = fixtures.hub_files  # the shared fixture, by this name
MS_TOKEN = "ms-sdk-token"


@pytest.fixture
def fake_ms(hub_files):
    with FakeModelScope() as ms:
        ms.add(FakeRepo(TINY, dict(hub_files)))
        ms.add(FakeRepo(PRIVATE, dict(hub_files), private=True, allowed_tokens=(MS_TOKEN,)))
        yield ms


def ms_args(ms) -> list[str]:
    return ["--source", "modelscope", "--endpoint", ms.url]


def test_search_lists_the_repository_with_verdicts(capsys, fake_ms):
    assert main(["search", TINY, *ms_args(fake_ms), "--vram-budget", "8G", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["source"] == "modelscope" and out["endpoint"] == fake_ms.url
    (repo,) = out["repos"]
    assert repo["repo"] == TINY and repo["revision"] == "master"
    assert {m["fit"]["verdict"] for m in repo["models"]} == {"fits_gpu"}
    assert all(p["sha256"] and p["size"] for m in repo["models"] for p in m["parts"])
    assert main(["--lang", "en", "search", "tiny llama", *ms_args(fake_ms)]) == 1
    assert "ModelScope cannot be searched by words here" in capsys.readouterr().err


def test_get_downloads_verifies_and_checks(capsys, fake_ms, hub_files, tmp_path, monkeypatch):
    folder = tmp_path / "models"
    monkeypatch.setenv("HF_TOKEN", MS_TOKEN)  # a Hugging Face token is not sent to ModelScope
    monkeypatch.delenv("MODELSCOPE_API_TOKEN", raising=False)
    assert main(["--lang", "en", "get", PRIVATE, *ms_args(fake_ms), "--quant", "F16", "--folder", str(folder)]) == 1
    err = capsys.readouterr().err
    assert "is gated or private" in err and "MODELSCOPE_API_TOKEN" in err
    monkeypatch.setenv("MODELSCOPE_API_TOKEN", MS_TOKEN)
    assert main(["--lang", "en", "get", PRIVATE, *ms_args(fake_ms), "--quant", "F16", "--folder", str(folder),
                 "--backend", "embedded", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    path = folder / "test" / "private-llama-GGUF" / "tiny-llama-F16.gguf"
    assert out["path"] == str(path) and out["verified"] is True and out["status"] != "error"
    assert sha256_of(path) == sha256_of(hub_files["tiny-llama-F16.gguf"])
    assert sorted(p.name for p in path.parent.iterdir()) == ["tiny-llama-F16.gguf"]
