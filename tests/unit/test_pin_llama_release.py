"""scripts/pin_llama_release.py reads the GitHub releases API's asset ``digest`` ("sha256:<hex>") and ``size``."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "pin_llama_release.py"


def load():
    spec = importlib.util.spec_from_file_location("pin_llama_release", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_digests_are_taken_and_gaps_reported():
    script = load()
    names = script.wanted_assets()
    assert "llama-b11434-bin-win-cuda-12.4-x64.zip" in names and "cudart-llama-bin-win-cuda-12.4-x64.zip" in names
    release = {"tag_name": "b11434", "assets": [
        {"name": names[0], "size": 123, "digest": "sha256:" + "ab" * 32},
        {"name": names[1], "size": 5, "digest": None}]}
    pins, problems = script.pins_from_release(release, names[:3])
    assert pins == {names[0]: ("ab" * 32, 123)}
    assert problems == [f"{names[1]}: no sha256 digest (none)", f"{names[2]}: not in release b11434"]
