"""The app's other JSON files in the user's folders (the checksum cache, "Find safe settings" results, the processor
probe, the engine build record and self-test, the children registry, the kept diagnoses) are read within bounds too:
a FIFO, a link to /dev/zero or JSON nested 100,000 deep in their place counts as nothing stored (measured again),
never a hang or a crash."""

from __future__ import annotations

import os
import threading

import pytest

from app.core import paths

DEADLINE_S = 30  # far above the milliseconds it takes; only a hang reaches it


def _within_deadline(read):
    box = {}
    thread = threading.Thread(target=lambda: box.update(value=read()), daemon=True)
    thread.start()
    thread.join(DEADLINE_S)
    assert not thread.is_alive(), f"reading did not return within {DEADLINE_S} s"
    return box["value"]


def _plant(path, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        path.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")


HOSTILE = [pytest.param("fifo", marks=pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX")),
           pytest.param("dev-zero", marks=pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="POSIX")),
           "deep"]


@pytest.mark.parametrize("kind", HOSTILE)
def test_checksum_cache(kind, tiny_model):
    from app.core.gguf import sha256

    _plant(sha256._cache_file(), kind)
    assert _within_deadline(lambda: sha256.cached_sha256(tiny_model)) is None


@pytest.mark.parametrize("kind", HOSTILE)
def test_probe_result_cache(kind):
    from app.core.probe import cache

    key = {"model": "x.gguf", "size": 1}
    _plant(cache._path(key), kind)
    assert _within_deadline(lambda: cache.load_cached(key)) is None


@pytest.mark.slow  # the processor is probed again: ~7 s
@pytest.mark.parametrize("kind", HOSTILE)
def test_processor_probe_cache(kind):
    from app.core.engine import isa_cache

    _plant(isa_cache._cache_file(), kind)
    assert _within_deadline(isa_cache.current_report) is not None  # probed again


@pytest.mark.parametrize("kind", HOSTILE)
def test_engine_build_record(kind, tmp_path):
    from app.core.engine.build_record import RECORD_NAME, read_all

    _plant(tmp_path / RECORD_NAME, kind)
    assert _within_deadline(lambda: read_all(tmp_path)) == {}


@pytest.mark.parametrize("kind", HOSTILE)
def test_children_registry(kind):
    from app.core.process.registry import find_stale_children, registry_dir

    record = registry_dir() / "123.json"
    _plant(record, kind)
    assert _within_deadline(find_stale_children) == []
    assert not record.exists() and not record.is_symlink()  # not a record of ours: removed
    assert paths.data_dir() in record.parents


@pytest.mark.parametrize("kind", HOSTILE)
def test_kept_diagnoses(kind):
    from app.core.server.diagnosis_log import diagnoses_path, read_diagnoses

    _plant(diagnoses_path(), kind)
    assert _within_deadline(read_diagnoses) == []


@pytest.mark.parametrize("kind", HOSTILE)
def test_engine_self_test_cache(kind):
    from app.core.engine import selftest

    _plant(selftest._cache_file(), kind)
    assert _within_deadline(lambda: selftest.cached("embedded")) is None  # tested again
