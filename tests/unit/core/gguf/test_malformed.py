"""Files the reader must refuse cleanly: wrong magic, v1, truncated, absurd lengths and counts."""

from __future__ import annotations

import struct
import time
import tracemalloc

import pytest

from app.core.gguf.errors import GGUFError
from app.core.gguf.reader import read_model_info
from app.core.gguf.validate import validate
from app.core.problem import Status
from tests.unit.core.gguf.test_support import set_version, write_gguf


def _header(n_tensors=0, n_kv=1, version=3) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", version, n_tensors, n_kv)


def _key(name: bytes) -> bytes:
    return struct.pack("<Q", len(name)) + name


def test_not_gguf_names_the_problem(tmp_path):
    path = tmp_path / "model.safetensors"
    path.write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}" + b"\0" * 64)
    with pytest.raises(GGUFError) as caught:
        read_model_info(path)
    assert caught.value.check_id == "magic"
    assert "not a GGUF model file" in str(caught.value)
    report = validate(path)
    assert report.check("magic").status is Status.ERROR and report.info is None


def test_gguf_v1_is_explained(tmp_path):
    path = write_gguf(tmp_path / "old.gguf")
    set_version(path, 1)
    with pytest.raises(GGUFError) as caught:
        read_model_info(path)
    assert caught.value.check_id == "version"
    assert "GGUFv1 is no longer supported" in caught.value.message.render("en")
    assert "GGUFv1" in caught.value.message.render("zh")


@pytest.mark.parametrize("version", [0, 4, 77])
def test_unknown_versions(tmp_path, version):
    path = write_gguf(tmp_path / "v.gguf")
    set_version(path, version)
    with pytest.raises(GGUFError) as caught:
        read_model_info(path)
    assert caught.value.check_id == "version"


def test_array_length_2_pow_63_in_49_bytes_fails_fast_without_memory(tmp_path):
    data = _header() + _key(b"k") + struct.pack("<IIQ", 9, 8, 2**63)  # ARRAY of STRING, 2^63 items
    assert len(data) == 49
    path = tmp_path / "bomb.gguf"
    path.write_bytes(data)
    tracemalloc.start()
    start = time.perf_counter()
    with pytest.raises(GGUFError):
        read_model_info(path)
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert elapsed < 0.1
    assert peak < 2 << 20


@pytest.mark.parametrize("item_type,count", [(0, 2**30), (10, 2**40), (8, 10**6), (4, 2**62)])
def test_array_counts_beyond_the_file_are_refused(tmp_path, item_type, count):
    path = tmp_path / "a.gguf"
    path.write_bytes(_header() + _key(b"k") + struct.pack("<IIQ", 9, item_type, count) + b"\0" * 64)
    with pytest.raises(GGUFError):
        read_model_info(path)


def test_string_lengths_beyond_the_file_or_the_llama_cpp_limit(tmp_path):
    path = tmp_path / "s.gguf"
    path.write_bytes(_header() + _key(b"k") + struct.pack("<IQ", 8, 2**29) + b"abc")
    with pytest.raises(GGUFError) as caught:
        read_model_info(path)
    assert caught.value.check_id == "truncation"
    path.write_bytes(_header() + _key(b"k") + struct.pack("<IQ", 8, 2**40) + b"abc")
    with pytest.raises(GGUFError, match="1 GiB"):
        read_model_info(path)


@pytest.mark.parametrize("n_tensors,n_kv", [(2**63 - 1, 0), (0, 2**62), (10**9, 1)])
def test_counts_beyond_the_file(tmp_path, n_tensors, n_kv):
    path = tmp_path / "c.gguf"
    path.write_bytes(_header(n_tensors, n_kv) + b"\0" * 100)
    with pytest.raises(GGUFError):
        read_model_info(path)


def test_nested_arrays_and_bad_value_types_are_refused(tmp_path):
    for body in (struct.pack("<IIQ", 9, 9, 1), struct.pack("<I", 13)):
        path = tmp_path / "n.gguf"
        path.write_bytes(_header() + _key(b"k") + body + b"\0" * 32)
        with pytest.raises(GGUFError) as caught:
            read_model_info(path)
        assert caught.value.check_id == "structure"


def test_duplicate_and_empty_keys_are_refused(tmp_path):
    path = tmp_path / "d.gguf"
    entry = _key(b"k") + struct.pack("<IB", 0, 1)
    path.write_bytes(_header(n_kv=2) + entry + entry)
    with pytest.raises(GGUFError, match="twice"):
        read_model_info(path)
    path.write_bytes(_header(n_kv=1) + _key(b"") + struct.pack("<IB", 0, 1))
    with pytest.raises(GGUFError, match="empty"):
        read_model_info(path)


def test_bad_alignment_is_refused(tmp_path):
    path = write_gguf(tmp_path / "al.gguf",
                      extra_kv={"general.alignment": (48, __import__("gguf").GGUFValueType.UINT32)})
    with pytest.raises(GGUFError, match="power of two"):
        read_model_info(path)


def test_truncated_in_the_header_and_in_the_data(tmp_path):
    path = write_gguf(tmp_path / "t.gguf")
    full = path.read_bytes()
    info = read_model_info(path)
    for cut in (3, 10, 30, 200, full.index(b"output.weight") + 3):
        path.write_bytes(full[:cut])
        with pytest.raises(GGUFError) as caught:
            read_model_info(path)
        assert caught.value.check_id in ("truncation", "magic"), cut
    path.write_bytes(full[: info.data_offset + 100])
    report = validate(path)
    check = report.check("truncation")
    assert check.status is Status.ERROR
    assert "data is not within the file bounds" in check.message.render("en")
    assert report.info is not None and report.has_errors


def test_tensor_name_too_long_and_too_many_dims(tmp_path):
    import numpy as np

    long_name = "x" * 64
    path = write_gguf(tmp_path / "l.gguf", tensors=[(long_name, np.ones(4, dtype=np.float32))])
    with pytest.raises(GGUFError, match="63"):
        read_model_info(path)
    path = write_gguf(tmp_path / "d.gguf", tensors=[("a", np.ones(4, dtype=np.float32))])
    data = bytearray(path.read_bytes())
    at = data.index(struct.pack("<Q", 1) + b"a") + 9
    data[at:at + 4] = struct.pack("<I", 5)
    path.write_bytes(bytes(data))
    with pytest.raises(GGUFError, match="dimensions"):
        read_model_info(path)


def test_empty_file_and_directory_are_path_errors(tmp_path):
    empty = tmp_path / "empty.gguf"
    empty.write_bytes(b"")
    report = validate(empty)
    assert [c.id for c in report.checks] == ["path"] and report.has_errors
    assert "0 bytes" in str(report.checks[0].message)
    folder = tmp_path / "folder.gguf"
    folder.mkdir()
    report = validate(folder)
    assert report.checks[0].status is Status.ERROR and "folder" in str(report.checks[0].message)
    report = validate(tmp_path / "missing.gguf")
    assert "does not exist" in str(report.checks[0].message)
    with pytest.raises(GGUFError):
        read_model_info(tmp_path / "missing.gguf")
