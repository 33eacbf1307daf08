"""Models other apps already downloaded: found in a fake home's Ollama, Hugging Face, LM Studio, Jan and llama.cpp
folders, named, sized, typed and checked from the header; missing folders are no error."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app.core.library.scan import find_local_models
from app.core.library.sources import known_sources
from app.core.problem import Status
from app.core.settings import SCHEMA_VERSION, load_settings
from app.core.synthetic.tiny_llama import write_tiny_llama
from tests.fakes.local_models import fake_env, make_fake_home


@pytest.fixture
def fake(tmp_path):
    return make_fake_home(tmp_path)


def _by_path(models):
    return {m.path: m for m in models}


def test_every_app_folder_is_found_once(fake):
    models = find_local_models(env=fake_env(fake["home"]), platform="linux")
    found = _by_path(models)
    assert len(models) == 7
    assert found[str(fake["ollama"])].name == "tiny:latest" and found[str(fake["ollama"])].app == "ollama"
    assert found[str(fake["ollama_user"])].name == "someone/tiny:f16"
    assert found[str(fake["hf"])].name == "org/tiny-GGUF/tiny-Q8_0.gguf"  # the snapshot link, not the blob
    assert found[str(fake["hf"])].app == "huggingface"
    assert found[str(fake["lm_studio"])].app == "lm_studio"
    assert found[str(fake["jan"])].app == "jan"
    assert found[str(fake["llama_cpp"])].app == "llama_cpp"


def test_size_quant_and_checks_come_from_the_header(fake):
    found = _by_path(find_local_models(env=fake_env(fake["home"]), platform="linux"))
    ok = found[str(fake["ollama"])]
    assert ok.status is Status.OK and ok.message is None
    assert ok.size == fake["ollama"].stat().st_size and ok.quant == "ALL_F32" and ok.architecture == "llama"
    assert found[str(fake["ollama_user"])].quant == "MOSTLY_F16"
    broken = found[str(fake["broken"])]
    assert broken.status is Status.ERROR and broken.message is not None and broken.message.render()
    assert json.dumps(broken.to_dict())  # JSON-ready


def test_no_checks_lists_without_reading(fake):
    models = find_local_models(env=fake_env(fake["home"]), platform="linux", check=False)
    assert len(models) == 7 and all(m.status is None and m.quant is None for m in models)


def test_missing_folders_are_normal(tmp_path):
    assert find_local_models(env=fake_env(tmp_path / "nobody"), platform="linux") == []


def test_environment_overrides_move_the_folders(fake, tmp_path):
    moved = tmp_path / "elsewhere"
    (fake["home"] / ".ollama").rename(moved)
    hub = tmp_path / "hub"
    (fake["home"] / ".cache" / "huggingface" / "hub").rename(hub)
    cache = tmp_path / "llcache"
    (fake["home"] / ".cache" / "llama.cpp").rename(cache)
    env = fake_env(fake["home"]) | {"OLLAMA_MODELS": str(moved / "models"), "HF_HUB_CACHE": str(hub),
                                    "LLAMA_CACHE": str(cache)}
    apps = sorted(m.app for m in find_local_models(env=env, platform="linux"))
    assert apps == sorted(["ollama", "ollama", "huggingface", "lm_studio", "lm_studio", "jan", "llama_cpp"])
    left = find_local_models(env=fake_env(fake["home"]) | {"HF_HOME": str(tmp_path / "none")}, platform="linux",
                             check=False)
    assert sorted(m.app for m in left) == ["jan", "lm_studio", "lm_studio"]  # the others moved away above


def test_user_folders_and_split_models(tmp_path):
    folder = tmp_path / "mine"
    first = write_tiny_llama(folder / "big-00001-of-00002.gguf")
    write_tiny_llama(folder / "big-00002-of-00002.gguf")
    write_tiny_llama(folder / ".hidden" / "skip.gguf")
    models = find_local_models(env=fake_env(tmp_path / "nobody"), extra_folders=[str(folder)], platform="linux",
                               check=False)
    assert [(m.path, m.app) for m in models] == [(str(first), "folder")]


def test_jan_data_folder_from_its_settings(tmp_path):
    home = tmp_path / "home"
    data = tmp_path / "jan-data"
    model = write_tiny_llama(data / "llamacpp" / "models" / "tiny" / "model.gguf")
    settings = home / ".config" / "Jan" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"data_folder": str(data)}))
    models = find_local_models(env=fake_env(home), platform="linux", check=False)
    assert [(m.path, m.app) for m in models] == [(str(model), "jan")]


def test_windows_places(tmp_path):
    home, local, roaming = tmp_path / "User", tmp_path / "Local", tmp_path / "Roaming"
    env = {"USERPROFILE": str(home), "LOCALAPPDATA": str(local), "APPDATA": str(roaming)}
    paths = {(s.app, Path(s.path)) for s in known_sources(env=env, platform="win32")}
    assert ("ollama", home / ".ollama" / "models") in paths
    assert ("lm_studio", home / ".lmstudio" / "models") in paths
    assert ("llama_cpp", local / "llama.cpp") in paths
    assert ("jan", roaming / "Jan" / "data" / "llamacpp" / "models") in paths
    assert ("huggingface", home / ".cache" / "huggingface" / "hub") in paths


def test_opening_never_copies(fake):
    before = sorted(str(p) for p in fake["home"].rglob("*"))
    find_local_models(env=fake_env(fake["home"]), platform="linux")
    assert sorted(str(p) for p in fake["home"].rglob("*")) == before


def test_user_folders_are_a_setting(tmp_path):
    settings = load_settings(tmp_path / "settings.json")
    assert settings.model_folders == []
    assert settings.add_model_folder(str(tmp_path)) and not settings.add_model_folder(str(tmp_path))
    settings.save()
    assert load_settings(tmp_path / "settings.json").model_folders == [str(tmp_path)]
    old = tmp_path / "v1.json"
    old.write_text(json.dumps({"version": 1, "model_folders": [str(tmp_path), 3, ""]}))
    reread = load_settings(old)
    assert reread.model_folders == [str(tmp_path)] and reread.data["version"] == SCHEMA_VERSION
    settings.remove_model_folder(str(tmp_path))
    assert settings.model_folders == []


def test_symlinked_folders_are_not_followed(tmp_path):
    folder = tmp_path / "mine"
    write_tiny_llama(tmp_path / "outside" / "x.gguf")
    folder.mkdir()
    os.symlink(tmp_path / "outside", folder / "link")
    assert find_local_models(env=fake_env(tmp_path / "nobody"), extra_folders=[str(folder)], check=False) == []


def test_the_app_download_folder_is_listed_first(tmp_path):
    from app.core.gguf.path_checks import safe_model_dir

    sources = known_sources(env=fake_env(tmp_path / "home"), platform="linux")
    assert (sources[0].app, Path(sources[0].path)) == ("downloads", safe_model_dir())
