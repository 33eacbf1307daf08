"""`doctor` on a damaged 1 TiB sparse file answers in seconds: a file whose structure already failed is not read whole
for its checksum (it took 36 minutes). A child with a deadline, so a regression fails instead of reading on."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from tests.paths import ROOT
from tests.unit.core.gguf.test_support import set_tensor_type, write_gguf

DEADLINE_S = 120  # about 10 s of start-up, hardware scan and checks on 2 busy cores; the hash took 36 minutes


@pytest.mark.slow
def test_doctor_answers_in_seconds_for_a_damaged_terabyte_file(tmp_path):
    tensors = [("token_embd.weight", np.ones((4, 256), dtype=np.float32)),
               ("output.weight", np.ones(256, dtype=np.float32))]
    path = write_gguf(tmp_path / "huge.gguf", tensors=tensors)
    set_tensor_type(path, "token_embd.weight", 1)  # F32 -> F16: the next tensor's offset is now wrong
    with open(path, "r+b") as handle:
        handle.truncate(1 << 40)  # 1 TiB, a hole: no disk used
    done = subprocess.run([sys.executable, "-m", "app", "doctor", str(path), "--json", "--backend", "embedded"],
                          cwd=ROOT, capture_output=True, text=True, timeout=DEADLINE_S)
    assert done.returncode == 1, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["model"]["sha256"] is None
    assert {c["id"]: c["status"] for c in report["checks"]}["tensor_offsets"] == "error"
