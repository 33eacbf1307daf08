"""`gguf-launcher models [--json]`: the models other apps downloaded, from a fake home only."""

from __future__ import annotations

import json

import pytest

from app.cli import main
from app.core.settings import load_settings, settings_path
from app.core.synthetic.tiny_llama import write_tiny_llama
from tests.fakes.local_models import make_fake_home


@pytest.fixture
def fake(tmp_path, monkeypatch):
    paths = make_fake_home(tmp_path)
    for name in ("OLLAMA_MODELS", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "LLAMA_CACHE",
                 "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "APPDATA", "LOCALAPPDATA"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(paths["home"]))
    monkeypatch.setenv("USERPROFILE", str(paths["home"]))
    return paths


def test_json_lists_every_model(capsys, fake):
    assert main(["models", "--json"]) == 0
    models = json.loads(capsys.readouterr().out)["models"]
    by_path = {m["path"]: m for m in models}
    assert len(models) == 7
    ollama = by_path[str(fake["ollama"])]
    assert ollama["name"] == "tiny:latest" and ollama["app"] == "ollama" and ollama["checks"] == "ok"
    assert ollama["quant"] == "ALL_F32" and ollama["size_bytes"] == fake["ollama"].stat().st_size
    assert by_path[str(fake["broken"])]["checks"] == "error" and by_path[str(fake["broken"])]["problem"]
    for model in models:
        assert set(model) >= {"path", "name", "app", "size_bytes", "quant", "checks", "problem"}


def test_text_output_names_the_apps(capsys, fake):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "tiny:latest" in out and "Ollama" in out and "Hugging Face cache" in out and "LM Studio" in out
    assert "[FAIL] broken.gguf" in out and "Traceback" not in out


def test_folders_added_in_the_app_and_on_the_command_line(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "nobody"))
    monkeypatch.setenv("USERPROFILE", str(tmp_path / "nobody"))
    for name in ("OLLAMA_MODELS", "HF_HUB_CACHE", "HF_HOME", "LLAMA_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    saved = write_tiny_llama(tmp_path / "saved" / "a.gguf")
    given = write_tiny_llama(tmp_path / "given" / "b.gguf")
    settings = load_settings(settings_path())
    settings.add_model_folder(str(saved.parent))
    settings.save()
    assert main(["models", "--json", "--folder", str(given.parent)]) == 0
    paths = [m["path"] for m in json.loads(capsys.readouterr().out)["models"]]
    assert paths == [str(saved), str(given)]


def test_nothing_found_is_a_sentence(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "nobody"))
    monkeypatch.setenv("USERPROFILE", str(tmp_path / "nobody"))
    for name in ("OLLAMA_MODELS", "HF_HUB_CACHE", "HF_HOME", "LLAMA_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    assert main(["models"]) == 0
    assert "No GGUF models found" in capsys.readouterr().out
