"""The --json contract on every path: a failing command prints one JSON error object on stdout (it was empty), and
every JSON output is valid UTF-8 with C1 controls, bidi overrides and lone surrogates (a file name's undecodable
bytes) written as \\u escapes, so a terminal showing it obeys none of them and a parser gets the same string back."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from app.cli import main
from tests.paths import ROOT

HOSTILE = "a\u202eb\u2066c\u200fd\x85e\x9b31mf\x1b]0;title\x07g\udcffh\x7fi\u061cj"


def _one_error_object(out: str) -> dict:
    document = json.loads(out)  # exactly one JSON document: json.loads refuses anything after it
    assert set(document) == {"error"} and document["error"]["message"]
    assert set(document["error"]) == {"message", "fix", "evidence", "fix_action"}
    return document["error"]


@pytest.mark.parametrize("command", [["plan", "{missing}"], ["probe", "{missing}"], ["selftest", "{missing}"],
                                     ["report", "--out", "{blocked}/r.zip"]])
def test_a_failing_json_command_prints_one_error_object(command, capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    argv = [arg.format(missing=tmp_path / "missing.gguf", blocked=blocker) for arg in command]
    assert main([*argv, "--json"]) == 1
    captured = capsys.readouterr()
    error = _one_error_object(captured.out)
    assert error["message"] in captured.err  # the sentence for a person stays on stderr
    assert main(argv) == 1 and capsys.readouterr().out == ""  # without --json stdout stays empty, as before


def test_json_text_escapes_what_a_terminal_would_obey_and_round_trips():
    from app.cli._output import json_text

    text = json_text({"name": HOSTILE}, indent=2)
    raw = text.encode("utf-8")  # no lone surrogate left: strict UTF-8 works
    for char in ("\u202e", "\u2066", "\u200f", "\x85", "\x9b", "\x1b", "\x07", "\x7f", "\u061c"):
        assert char not in text
    assert "\\u202e" in text and "\\u009b" in text and "\\udcff" in text and "\\u001b" in text
    assert json.loads(raw.decode("utf-8")) == {"name": HOSTILE}  # nothing lost for a program reading it


@pytest.mark.slow  # a doctor child: ~10 s on 2 busy cores
@pytest.mark.skipif(sys.platform == "win32" or os.fsencode("\udcff") != b"\xff", reason="POSIX byte file names")
def test_doctor_json_is_valid_utf8_for_a_file_name_that_is_not(tmp_path, tiny_model):
    folder = os.fsencode(tmp_path)
    name = folder + b"/bad\xff\xfe\xe2\x80\xae-name.gguf"  # undecodable bytes, then U+202E
    with open(tiny_model, "rb") as source, open(name, "wb") as copy:
        copy.write(source.read())
    done = subprocess.run([sys.executable, "-m", "app", "doctor", name, "--json", "--no-sha256",
                           "--backend", "embedded"], cwd=ROOT, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    text = done.stdout.decode("utf-8")  # strict: raised UnicodeDecodeError before
    assert "\u202e" not in text and "\\udcff\\udcfe\\u202e-name.gguf" in text
    assert json.loads(text)["model"]["path"] == os.fsdecode(name)  # the bytes come back with os.fsencode
