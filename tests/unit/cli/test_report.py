"""`gguf-launcher report`: writes the zip, prints where, says what it left out; a bad place is a sentence."""

from __future__ import annotations

import json
import zipfile

from app.cli import main


def test_report_prints_the_path_and_writes_the_zip(capsys, tmp_path):
    out = tmp_path / "r.zip"
    assert main(["report", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"Diagnostics report written: {out}" in printed and "secrets" in printed
    with zipfile.ZipFile(out) as archive:
        assert {"README.txt", "scan.json", "settings.json"} <= set(archive.namelist())


def test_report_json_and_chinese(capsys, tmp_path):
    assert main(["report", "--out", str(tmp_path / "r.zip"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["path"] == str(tmp_path / "r.zip") and "scan.json" in result["files"]
    assert main(["--lang", "zh", "report", "--out", str(tmp_path / "z.zip")]) == 0
    assert "诊断报告已写入" in capsys.readouterr().out


def test_an_unwritable_place_is_a_sentence_and_exit_1(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["report", "--out", str(blocker / "r.zip")]) == 1
    err = capsys.readouterr().err
    assert "could not be written" in err and "Traceback" not in err
