"""`doctor` on a damaged file prints what failed first, in the same order and words as the Model step."""

from __future__ import annotations

from app.cli import main
from tests.unit.core.gguf.test_check_order import layer_lacking_a_part


def test_doctor_leads_with_the_failures_plain_sentence_first(capsys, tmp_path):
    path = layer_lacking_a_part(tmp_path)
    code = main(["doctor", str(path), "--no-sha256"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    start = next(i for i, line in enumerate(lines) if line.startswith("Checks (engine:"))
    checks = lines[start + 1:]
    assert checks[0].startswith("  2 of ") and "checks failed (the model's parts, the data layout)" in checks[0]
    assert checks[1] == ("[FAIL] This file is damaged: layer 1 lacks a part every other layer has "
                         "(attention key).")
    rows = [line for line in checks if line.startswith("[")]
    fails = [i for i, line in enumerate(rows) if line.startswith("[FAIL]")]
    assert fails == list(range(len(fails))) and len(fails) >= 2  # no passed row above a failure
    assert "not stored one right after another" in rows[fails[-1]]
