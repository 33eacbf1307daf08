"""A llama-server replaced at the same path is inspected again (the Settings step's command line uses core's
backend resolution, which remembers a binary's --help per file identity)."""

from __future__ import annotations

import os
import sys

import pytest

from app.core.launch import discovery
from app.core.launch.backends import resolve_backend
from app.core.launch.config import LaunchConfig

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the fake llama-server is a shell script")


def _script(build: int, flag: str) -> str:
    return (f'#!/bin/sh\ncase "$1" in --version) echo "version: {build} (feedbee)";; '
            f'--help) echo "-m,    --model FNAME        model path"; echo "{flag} N    a flag";; esac\n')


def test_a_binary_replaced_at_the_same_path_is_seen(tmp_path):
    binary = tmp_path / "llama-server"
    binary.write_text(_script(4242, "--alpha"))
    binary.chmod(0o755)
    discovery.clear_cache()
    config = LaunchConfig(model="m.gguf", backend="llama-server", server_bin=str(binary))
    first = resolve_backend(config)
    assert first.build_number == 4242 and first.accepts("--alpha")
    stat = binary.stat()

    new = tmp_path / "llama-server.new"  # a rebuild installed over the old file: same size, same mtime
    new.write_text(_script(4343, "--gamma"))
    new.chmod(0o755)
    assert new.stat().st_size == stat.st_size
    os.utime(new, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    os.replace(new, binary)
    assert (binary.stat().st_size, binary.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)

    second = resolve_backend(config)
    assert second.build_number == 4343 and second.accepts("--gamma") and not second.accepts("--alpha")
    assert resolve_backend(config) == second  # and then remembered
