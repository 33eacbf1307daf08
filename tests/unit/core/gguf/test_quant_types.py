"""Which tensor types a llama.cpp build loads, and what the embedded llama-cpp-python vendors,
found by reading its source text (never importing it)."""

from __future__ import annotations

import importlib
import subprocess
import sys

from app.core.gguf import quant_types
from app.core.gguf.quant_types import (
    embedded_build,
    embedded_supported_types,
    embedded_type_count,
    embedded_version,
    supported_types_for_build,
)


def test_types_by_build():
    assert supported_types_for_build(None) == set(quant_types.KNOWN_TYPES)
    old = supported_types_for_build(5000)
    assert {0, 1, 2, 8, 12, 30, 34} <= old and not {39, 40, 41, 42} & old
    assert 39 in supported_types_for_build(6096) and 40 not in supported_types_for_build(6096)
    assert {39, 40, 41, 42} <= supported_types_for_build(11312)
    assert not {4, 5, 31, 32, 33, 36, 37, 38} & supported_types_for_build(None)


def _fake_llama_cpp(root, version: str, type_count: int):
    package = root / "llama_cpp"
    package.mkdir()
    (package / "__init__.py").write_text(f'raise RuntimeError("must not be imported")\n__version__ = "{version}"\n')
    (package / "llama_cpp.py").write_text(f"GGML_TYPE_Q1_0 = 41\nGGML_TYPE_COUNT = {type_count}\n")


def test_embedded_facts_come_from_source_text(tmp_path, monkeypatch):
    _fake_llama_cpp(tmp_path, "0.3.36", 40)
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    monkeypatch.delitem(sys.modules, "llama_cpp", raising=False)
    assert embedded_version() == "0.3.36" and embedded_build() == 11312
    assert embedded_type_count() == 40
    types = embedded_supported_types()
    assert 39 in types and 30 in types and not {40, 41, 42} & types  # bounded by GGML_TYPE_COUNT
    assert "llama_cpp" not in sys.modules


def test_real_install_is_not_imported_by_the_reader():
    code = ("import sys; from app.core.gguf.quant_types import embedded_supported_types; "
            "from app.core.gguf.reader import read_model_info; from app.core.gguf.validate import validate; "
            "t = embedded_supported_types(); assert 'llama_cpp' not in sys.modules; print(max(t))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) == 42  # the vendored ggml (or, without it, this app's table) knows Q2_0
