"""`serve --json` that cannot start prints the error event on stdout (it was empty): the same error object as every
--json command, as one JSON line."""

from __future__ import annotations

import json

from app.cli import main


def test_a_missing_model_is_one_error_event(capsys, tmp_path):
    assert main(["serve", str(tmp_path / "missing.gguf"), "--json"]) == 1
    captured = capsys.readouterr()
    (line,) = captured.out.splitlines()
    event = json.loads(line)
    assert event["event"] == "error" and "does not exist" in event["error"]["message"]
    assert event["error"]["message"] in captured.err


def test_bad_watchdog_levels_are_one_error_event(capsys, tmp_path):
    assert main(["serve", str(tmp_path / "m.gguf"), "--json", "--memory-warn", "95", "--memory-restart", "90"]) == 1
    (line,) = capsys.readouterr().out.splitlines()
    assert json.loads(line)["error"]["message"].startswith("The restart level (90 %)")
