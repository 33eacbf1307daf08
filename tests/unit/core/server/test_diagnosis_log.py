"""The machine's last diagnoses (app/core/server/diagnosis_log.py): kept, capped, read back; never raising."""

from __future__ import annotations

import logging

from app.core.server import diagnosis_log
from app.core.server.diagnosis_log import KEEP, diagnoses_path, read_diagnoses, record_diagnosis


class Diagnosis:
    def __init__(self, cause: str) -> None:
        self.cause = cause

    def to_dict(self, lang=None):
        return {"cause": self.cause, "message": f"it was {self.cause}", "lang": lang}


def test_diagnoses_are_kept_newest_last_and_capped(tmp_path):
    for i in range(KEEP + 5):
        record_diagnosis(Diagnosis(f"cause{i}"), model=str(tmp_path / "folder" / "m.gguf"), log_name="server-m.log",
                         directory=tmp_path)
    kept = read_diagnoses(tmp_path)
    assert len(kept) == KEEP and kept[0]["cause"] == "cause5" and kept[-1]["cause"] == f"cause{KEEP + 4}"
    assert kept[-1]["model"] == "m.gguf" and kept[-1]["log"] == "server-m.log" and kept[-1]["lang"] == "en"
    assert "folder" not in diagnoses_path(tmp_path).read_text(encoding="utf-8")  # the file name only


def test_a_damaged_line_is_skipped_and_a_missing_file_is_no_diagnoses(tmp_path):
    assert read_diagnoses(tmp_path) == []
    diagnoses_path(tmp_path).write_text('{"cause": "a"}\nnot json\n[1]\n{"cause": "b"}\n', encoding="utf-8")
    assert [d["cause"] for d in read_diagnoses(tmp_path)] == ["a", "b"]


def test_an_unwritable_log_folder_loses_the_entry_quietly(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="app")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    record_diagnosis(Diagnosis("oom"), model="m.gguf", log_name="l", directory=blocker)
    assert blocker.read_text() == "x"
    assert any("could not keep the diagnosis" in r.getMessage() for r in caplog.records
               if r.name == diagnosis_log.__name__)
