"""Paths Windows programs cannot open: over MAX_PATH (260 characters).

Recorded from Microsoft's documented limit (MAX_PATH = 260, "Maximum Path Length Limitation") and llama.cpp's own
refusal when it cannot open a model, as in ggml-org/llama.cpp#16611 ("gguf_init_from_file: failed to open GGUF file
'..\\���f��\\gemma-3-4b-it-Q4_K_M.gguf'" / "llama_model_load_from_file_impl: failed to load model"), the same lines a
path that is too long produces; no thread with a 260-character path was found.
"""

from __future__ import annotations

from app.core.diagnosis import diagnose
from app.core.diagnosis.causes_file import WINDOWS_MAX_PATH, too_long_for_windows
from app.core.launch.config import LaunchConfig

FOLDER = "C:\\Users\\li\\Downloads\\" + "very-long-folder-name-from-a-zip-archive\\" * 6


def _model(length: int) -> str:
    name = "Qwen3-8B-Q4_K_M.gguf"
    return FOLDER[: length - len(name)] + name


def test_the_limit_applies_to_windows_paths_only():
    assert too_long_for_windows(_model(WINDOWS_MAX_PATH))
    assert not too_long_for_windows(_model(WINDOWS_MAX_PATH - 1))
    assert not too_long_for_windows("/home/li/" + "x" * 300 + ".gguf")  # Linux allows 4096
    assert too_long_for_windows("\\\\nas\\share\\" + "x" * 260)


def test_a_model_path_over_the_limit_is_told_with_its_length():
    path = _model(287)
    log = [f"gguf_init_from_file: failed to open GGUF file '{path}'",
           "llama_model_load_from_file_impl: failed to load model"]
    for lines in (log, log[1:]):
        diagnosis = diagnose(1, lines, LaunchConfig(model=path, backend="llama-server"))
        en, zh = diagnosis.message.render("en"), diagnosis.message.render("zh")
        assert "287 characters long" in en and "260" in en
        assert "287" in zh and "260" in zh
        assert "C:\\models" in diagnosis.next_step.render("en")
        assert diagnosis.restartable is False


def test_a_short_path_keeps_the_usual_sentence():
    path = _model(120)
    diagnosis = diagnose(1, [f"gguf_init_from_file: failed to open GGUF file '{path}'"], LaunchConfig(model=path))
    assert "characters long" not in diagnosis.message.render("en")
