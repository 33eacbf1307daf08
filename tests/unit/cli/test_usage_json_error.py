"""A usage error with --json on the command line also prints the one JSON error object on stdout (exit 2 as before;
stdout was empty)."""

from __future__ import annotations

import json

import pytest

from app.cli import main


def test_a_usage_error_with_json_is_one_error_object(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["plan", "model.gguf", "--ctx", "-5", "--json"])
    assert stopped.value.code == 2
    captured = capsys.readouterr()
    error = json.loads(captured.out)["error"]
    assert error["message"] == "argument --ctx: must be a positive number, not -5"
    assert error["fix"] == "see `gguf-launcher plan --help` for the options." and error["message"] in captured.err
    with pytest.raises(SystemExit):
        main(["plan", "model.gguf", "--ctx", "-5"])
    assert capsys.readouterr().out == ""  # without --json: stderr only, as before
