"""scripts/pin_llama_release.py reads the GitHub releases API's asset ``digest`` ("sha256:<hex>") and ``size``."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path

from tests.hub.fake_release import FakeRelease

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
    assert problems == [f"{names[1]}: no sha256 digest (none)",
                        f"{names[2]}: not in release b11434 (look alike: {names[0]})"]  # only the CUDA version differs
    assert names[2] == "llama-b11434-bin-win-cuda-12.4-x64.zip" and names[0].endswith("-cuda-13.4-x64.zip")


def test_the_script_prints_the_table_from_a_served_listing(capsys, monkeypatch):
    """main() against the loopback stand-in of the release and its listing (tests/hub/fake_release.py), --download
    included: the digests the listing gives are the bytes served."""
    script = load()
    names = script.wanted_assets()
    served = FakeRelease().start()
    try:
        served.assets = {name: name.encode() for name in names[1:]}  # the first one is missing from the release
        monkeypatch.setattr(script, "official_source", served.source)
        monkeypatch.setattr(script, "API", served.source().api_url)
        monkeypatch.setattr(sys, "argv", ["pin_llama_release.py", "--download"])
        assert script.main() == 1
    finally:
        served.stop()
    out, err = capsys.readouterr()
    assert f'    "{names[1]}": Pin("{hashlib.sha256(names[1].encode()).hexdigest()}", {len(names[1])}),' in out
    assert err.startswith(f"problem: {names[0]}: not in release b11434")
    assert len(served.downloads_asked()) == len(names) - 1
