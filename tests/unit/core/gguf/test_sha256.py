"""Streamed SHA-256: correct, compared with user/sibling values, cached, cancellable."""

from __future__ import annotations

import hashlib
import time

import pytest

from app.core.gguf.sha256 import HashCancelled, cached_sha256, expected_sha256_for, file_sha256, hash_stream
from app.core.gguf.validate import validate
from app.core.problem import Status


@pytest.fixture
def blob(tmp_path):
    path = tmp_path / "blob.gguf"
    path.write_bytes(bytes(range(256)) * 40_000 + b"tail")  # ~10 MiB: several chunks plus a partial one
    return path


def test_digest_is_correct_and_progress_reaches_the_end(blob):
    seen = []
    digest = hash_stream(blob, progress=lambda done, total: seen.append((done, total)), chunk_size=1 << 20)
    assert digest == hashlib.sha256(blob.read_bytes()).hexdigest()
    assert seen[-1] == (blob.stat().st_size, blob.stat().st_size)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and len(seen) >= 10


def test_cancel_stops_early(blob):
    calls = []

    def cancel():
        calls.append(1)
        return len(calls) > 2

    with pytest.raises(HashCancelled):
        hash_stream(blob, cancel=cancel, chunk_size=1 << 20)
    assert cached_sha256(blob) is None
    assert len(calls) == 3


def test_second_check_comes_from_the_cache(blob, app_home):
    first = file_sha256(blob)
    assert cached_sha256(blob) == first
    assert (app_home / "cache" / "sha256-cache.json").is_file()
    start = time.perf_counter()
    assert file_sha256(blob, cancel=lambda: True) == first  # would raise if it hashed again
    assert time.perf_counter() - start < 0.05


def test_cache_invalidated_when_the_file_changes(blob):
    first = file_sha256(blob)
    blob.write_bytes(blob.read_bytes() + b"x")
    assert cached_sha256(blob) is None
    assert file_sha256(blob) != first


def test_validate_match_mismatch_and_bad_input(tiny_model):
    digest = hashlib.sha256(tiny_model.read_bytes()).hexdigest()
    ok = validate(tiny_model, expected_sha256=digest.upper())
    assert ok.check("sha256").status is Status.OK and ok.sha256 == digest
    bad = validate(tiny_model, expected_sha256="0" * 64)
    assert bad.check("sha256").status is Status.ERROR and bad.has_errors
    assert "does not match" in str(bad.check("sha256").message)
    assert validate(tiny_model, expected_sha256="xyz").check("sha256").status is Status.ERROR


def test_no_hash_unless_asked(tmp_path, tiny_model):
    path = tmp_path / "m.gguf"
    path.write_bytes(tiny_model.read_bytes())
    assert validate(path).check("sha256") is None
    assert validate(path, compute_sha256=True).check("sha256").status is Status.OK
    assert validate(path).check("sha256") is not None  # now cached: shown for free


def test_sibling_sha256_file_and_sha256sums(tmp_path, tiny_model):
    path = tmp_path / "m.gguf"
    path.write_bytes(tiny_model.read_bytes())
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    (tmp_path / "SHA256SUMS").write_text(f"{'1' * 64}  other.gguf\n{digest} *m.gguf\n")
    assert expected_sha256_for(path) == (digest, str(tmp_path / "SHA256SUMS"))
    report = validate(path)
    assert report.check("sha256").status is Status.OK and "SHA256SUMS" in str(report.check("sha256").message)
    (tmp_path / "m.gguf.sha256").write_text("f" * 64 + "\n")
    report = validate(path)
    assert report.check("sha256").status is Status.ERROR and "m.gguf.sha256" in str(report.check("sha256").message)


def test_validate_reports_cancel_as_a_warning(tiny_model, tmp_path):
    path = tmp_path / "m2.gguf"
    path.write_bytes(tiny_model.read_bytes())
    check = validate(path, compute_sha256=True, cancel=lambda: True).check("sha256")
    assert check.status is Status.WARNING and "cancelled" in str(check.message)
