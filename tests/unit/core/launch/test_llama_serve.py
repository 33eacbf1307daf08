"""`llama serve` accepted wherever a llama-server is: llama.cpp's single `llama` program serves as `llama serve`
("`llama serve` and `llama-server` are the same server", huggingface/hub-docs#2593; on Windows
`llama.exe serve -m "model.gguf"`, mostlygeek/llama-swap#1036)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.core.launch import discovery
from app.core.launch.backends import resolve_backend
from app.core.launch.config import LaunchConfig
from app.core.problem import UserError

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the fake llama program is a shell script")

# answers only as `llama serve …`: a bare `llama --help` is the program's own help, with no --model
SINGLE = ('#!/bin/sh\n[ "$1" = serve ] || { echo "usage: llama <command>"; exit 1; }\nshift\n'
          'case "$1" in --version) echo "version: 9100 (c0ffee12)";; '
          '--help) echo "-m,    --model FNAME        model path"; echo "--port PORT    port";; esac\n')


def single_program(folder: Path) -> Path:
    program = folder / "llama"
    program.write_text(SINGLE)
    program.chmod(0o755)
    return program


def test_a_folder_with_only_the_single_program_is_found(tmp_path, monkeypatch):
    monkeypatch.delenv("GGUF_LAUNCHER_LLAMA_SERVER", raising=False)
    program = single_program(tmp_path)
    assert discovery.find_llama_server(str(tmp_path)) == program


def test_the_single_program_is_asked_as_llama_serve(tmp_path):
    program = single_program(tmp_path)
    discovery.clear_cache()
    facts = discovery.inspect_llama_server(program)
    assert facts.build_number == 9100
    assert "--model" in facts.flag_help and "--port" in facts.flag_help
    assert discovery.server_argv_prefix(program) == (str(program), "serve")
    assert discovery.server_argv_prefix(tmp_path / "llama-server") == (str(tmp_path / "llama-server"),)


def test_llama_server_is_preferred_over_the_single_program_in_one_folder(tmp_path):
    single_program(tmp_path)
    server = tmp_path / "llama-server"
    server.write_text("#!/bin/sh\n")
    server.chmod(0o755)
    assert discovery.find_llama_server(str(tmp_path)) == server


def test_a_folder_with_neither_names_the_llama_server_it_looked_for(tmp_path):
    with pytest.raises(UserError) as error:
        discovery.find_llama_server(str(tmp_path))
    assert str(tmp_path / discovery.EXE_NAME) in error.value.message.render("en")


def test_the_server_argv_of_the_single_program_starts_with_serve(tmp_path):
    program = single_program(tmp_path)
    discovery.clear_cache()
    backend = resolve_backend(LaunchConfig(model="m.gguf", backend="llama-server", server_bin=str(program)))
    assert backend.argv_prefix == (str(program), "serve")
