"""Release archives unpacked without writing outside their folder (app/core/hub/archive_unpack.py)."""

from __future__ import annotations

import os
import tarfile

import pytest

from app.core.hub.archive_unpack import BadArchive, UnsafeArchive, unpack
from tests.hub.fake_release import tar_gz, zip_bytes


def archive(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_the_ubuntu_layout_lands_flat_with_its_library_links(tmp_path):
    data = tar_gz({"llama-b11434/llama-server": (b"x", 0o755), "llama-b11434/libllama.so.0.6.0": b"lib"},
                  links={"llama-b11434/libllama.so": "libllama.so.0",
                         "llama-b11434/libllama.so.0": "libllama.so.0.6.0"})
    target = tmp_path / "out"
    unpack(archive(tmp_path, "a.tar.gz", data), target)
    assert sorted(p.name for p in target.iterdir()) == ["libllama.so", "libllama.so.0", "libllama.so.0.6.0",
                                                        "llama-server"]
    assert (target / "libllama.so").read_bytes() == b"lib" and os.access(target / "llama-server", os.X_OK)


def test_a_flat_windows_zip_keeps_its_names(tmp_path):
    target = tmp_path / "out"
    unpack(archive(tmp_path, "w.zip", zip_bytes({"llama-server.exe": b"MZ", "ggml-cuda.dll": b"MZ"})), target)
    assert sorted(p.name for p in target.iterdir()) == ["ggml-cuda.dll", "llama-server.exe"]


@pytest.mark.parametrize("name", ["../evil", "a/../../evil", "/etc/evil", "C:/Windows/evil.dll", "..\\evil.dll"])
def test_entries_that_leave_the_folder_are_refused(tmp_path, name):
    with pytest.raises(UnsafeArchive) as caught:
        unpack(archive(tmp_path, "s.zip", zip_bytes({"llama-server.exe": b"MZ", name: b"x"})), tmp_path / "out")
    assert caught.value.entry == name
    assert not list(tmp_path.parent.rglob("evil*"))


def test_a_zip_symlink_is_refused(tmp_path):
    with pytest.raises(UnsafeArchive) as caught:
        unpack(archive(tmp_path, "l.zip", zip_bytes({"a": b"x"}, symlinks={"ggml.dll": "/etc/passwd"})),
               tmp_path / "out")
    assert caught.value.why.render("en") == "a symbolic link"


@pytest.mark.parametrize("target_name", ["/etc/passwd", "../x", "sub/x", "missing.so", ""])
def test_a_tar_link_must_point_at_a_file_beside_it(tmp_path, target_name):
    data = tar_gz({"top/x": b"x", "top/sub/x": b"y"}, links={"top/lib.so": target_name})
    with pytest.raises(UnsafeArchive):
        unpack(archive(tmp_path, "l.tar.gz", data), tmp_path / "out")


def test_a_device_entry_is_refused(tmp_path):
    fifo = tarfile.TarInfo("top/pipe")
    fifo.type = tarfile.FIFOTYPE
    with pytest.raises(UnsafeArchive):
        unpack(archive(tmp_path, "d.tar.gz", tar_gz({"top/x": b"x"}, raw=[fifo])), tmp_path / "out")


def test_a_truncated_archive_is_bad(tmp_path):
    data = tar_gz({"top/big": os.urandom(1 << 20)})
    with pytest.raises(BadArchive):
        unpack(archive(tmp_path, "t.tar.gz", data[: len(data) // 2]), tmp_path / "out")
    with pytest.raises(BadArchive):
        unpack(archive(tmp_path, "t.zip", zip_bytes({"x": os.urandom(1 << 16)})[:1000]), tmp_path / "out2")


def test_not_an_archive_is_bad(tmp_path):
    with pytest.raises(BadArchive):
        unpack(archive(tmp_path, "n.tar.gz", b"Not Found"), tmp_path / "out")
