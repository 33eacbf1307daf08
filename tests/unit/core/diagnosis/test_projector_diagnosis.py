"""llama-server refusing a vision projector is said as such, never as a damaged model file to download again."""

from __future__ import annotations

import pytest

from app.core.diagnosis import diagnose
from app.core.launch.config import LaunchConfig

# The real llama-server b11434 given a generated projector 128 wide next to a generated model 256 wide (exit 1).
MISMATCH_LOG = [
    "0.00.008.072 I srv    load_model: loading model 'text.gguf'",
    "0.00.031.866 I cmn          init: llama threadpool init, n_threads = 1",
    "0.00.046.341 E mtmd_init_from_file: error: mismatch between text model (n_embd = 256) and mmproj (n_embd = 128)",
    "hint: you may be using wrong mmproj",
    "0.00.046.464 E srv    load_model: failed to load multimodal model, 'wrong.gguf'",
    "0.00.046.488 I srv    operator(): operator(): cleaning up before exit...",
    "0.00.047.407 E srv  llama_server: exiting due to model loading error",
]
CONFIG = LaunchConfig(model="/m/text.gguf", backend="llama-server", mmproj="/m/mmproj-other.gguf")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_wrong_projector_names_the_projector_and_offers_to_start_without_it(lang):
    diagnosis = diagnose(1, MISMATCH_LOG, CONFIG)
    assert diagnosis.cause == "projector_failed" and diagnosis.restartable is False
    rendered = diagnosis.to_dict(lang)
    assert "mmproj-other.gguf" in rendered["message"] and "text.gguf" in rendered["message"]
    assert "--" not in rendered["message"] + rendered["fix_hint"]
    assert diagnosis.action is not None and diagnosis.action.changes == {"mmproj": None}
    assert CONFIG.with_changes(**diagnosis.action.changes).mmproj is None
    assert any("mismatch between text model" in line for line in diagnosis.evidence)


def test_without_a_projector_in_the_config_there_is_no_fix_to_offer():
    diagnosis = diagnose(1, MISMATCH_LOG[2:], CONFIG.with_changes(mmproj=None))
    assert diagnosis.cause == "projector_failed" and diagnosis.action is None


def test_running_out_of_memory_while_loading_the_projector_is_a_memory_problem():
    lines = ["alloc_tensor_range: failed to allocate CPU buffer of size 629145600",
             "0.00.046.464 E srv    load_model: failed to load multimodal model, 'mmproj.gguf'",
             "0.00.047.407 E srv  llama_server: exiting due to model loading error"]
    assert diagnose(1, lines, CONFIG).cause == "ram_out_of_memory"
    assert diagnose(1, lines[1:], CONFIG).cause == "projector_failed"
