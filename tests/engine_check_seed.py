"""Every test's isolated app home starts with this processor's real engine self-test result.

The self-test (quantize a tiny model, load it, generate) runs once per session for the built-in engine; each
test's fresh home gets a copy of its cache files, so `doctor` and the Machine step read a real result instead
of spending seconds re-running it in every test. A test that wants no result deletes the file."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

SEEDED = ("engine-check.json", "isa-probe.json")


@pytest.fixture(scope="session")
def engine_check_home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("engine-check-home")
    previous = os.environ.get("GGUF_LAUNCHER_HOME")
    os.environ["GGUF_LAUNCHER_HOME"] = str(home)
    try:
        from app.core.engine import isa_cache, selftest

        isa_cache.current_report()
        check = selftest.run_check("embedded")
        assert check.ok, f"the built-in engine fails its self-test on this processor: {check.to_dict()}"
    finally:
        if previous is None:
            os.environ.pop("GGUF_LAUNCHER_HOME", None)
        else:
            os.environ["GGUF_LAUNCHER_HOME"] = previous
    return home / "cache"


@pytest.fixture(autouse=True)
def seeded_engine_check(app_home, engine_check_home) -> None:
    cache = app_home / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    for name in SEEDED:
        if (engine_check_home / name).is_file():
            shutil.copy2(engine_check_home / name, cache / name)
