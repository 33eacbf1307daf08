"""A huge sparse file costs seconds, not half an hour: a file whose structure already failed is not read whole for
its checksum (a 1 TiB one took 36 minutes), and a zero tail in sparse holes is measured without reading the holes.

Each run is a child with a deadline, so a regression fails the test instead of reading a terabyte in the background.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.paths import ROOT
from tests.unit.core.gguf.test_support import set_tensor_type, write_gguf

TIB = 1 << 40
DEADLINE_S = 60  # about a second of work; reading 1 TiB takes tens of minutes

_VALIDATE = """
import json, sys
from app.core.gguf.validate import validate
report = validate(sys.argv[1], compute_sha256=True, expected_sha256=sys.argv[2] or None)
print(json.dumps({"sha256": report.sha256, "checks": {c.id: [c.status.value, c.message.render("en")]
                                                      for c in report.checks}}))
"""


def _validate_within_deadline(path: Path, expected: str = "") -> dict:
    done = subprocess.run([sys.executable, "-c", _VALIDATE, str(path), expected], cwd=ROOT, capture_output=True,
                          text=True, timeout=DEADLINE_S)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _model(tmp_path: Path) -> Path:
    tensors = [("token_embd.weight", np.ones((4, 256), dtype=np.float32)),
               ("output.weight", np.ones(256, dtype=np.float32))]
    return write_gguf(tmp_path / "big.gguf", tensors=tensors)


def _grow_sparse(path: Path, size: int) -> None:
    with open(path, "r+b") as handle:
        handle.truncate(size)  # a hole: no disk used


def test_a_damaged_terabyte_file_is_not_hashed(tmp_path):
    path = _model(tmp_path)
    set_tensor_type(path, "token_embd.weight", 1)  # F32 -> F16: the next tensor's offset is now wrong
    _grow_sparse(path, TIB)
    result = _validate_within_deadline(path, expected="ab" * 32)
    assert result["checks"]["tensor_offsets"][0] == "error"
    assert result["sha256"] is None
    assert result["checks"]["sha256"] == ["warning", "The checksum was not computed: the checks above already "
                                                     "found the file damaged."]


def test_without_an_expected_checksum_a_damaged_file_gets_no_checksum_row(tmp_path):
    path = _model(tmp_path)
    set_tensor_type(path, "token_embd.weight", 1)
    _grow_sparse(path, TIB)
    result = _validate_within_deadline(path)
    assert result["sha256"] is None and "sha256" not in result["checks"]


@pytest.mark.slow  # ~4 s: the zero probes of a 1 TiB span
def test_a_sparse_terabyte_tail_is_measured_without_reading_its_holes(tmp_path):
    path = _model(tmp_path)
    _grow_sparse(path, TIB)
    done = subprocess.run([sys.executable, "-c", "import sys; from app.core.gguf.validate import validate; "
                           "print(validate(sys.argv[1]).check('zero_data').status.value)", str(path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=DEADLINE_S)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
