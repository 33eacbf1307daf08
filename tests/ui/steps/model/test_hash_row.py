"""The Model step's hash row in the real window: "Check file hash" with a match and a mismatch (the verdict is the
model's own sha256 check), and Cancel (no check row for a cancelled hash). Moved here from the Settings step's tests.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.core.problem import Status
from app.ui.widgets.job_row import JobState
from tests.ui.conftest import LONG, open_and_wait


def test_sha256_matches_and_mismatches_are_rows(qtbot, window, tiny_model):
    digest = hashlib.sha256(Path(tiny_model).read_bytes()).hexdigest()
    open_and_wait(qtbot, window, tiny_model)
    panel = window.model.hash_row
    panel.expected.setText(digest)
    panel.expected.editingFinished.emit()
    qtbot.mouseClick(panel.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.task is None and panel.job.state is JobState.DONE, timeout=LONG)
    assert "matches" in panel.job.status.text()
    assert window.model.report.checks[-1].id == "sha256" and window.model.report.checks[-1].status is Status.OK
    assert window.store.settings.profile(tiny_model)["expected_sha256"] == digest

    panel.expected.setText("0" * 64)
    qtbot.mouseClick(panel.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.task is None and panel.job.state is JobState.DONE, timeout=LONG)
    check = window.model.report.checks[-1]
    assert check.id == "sha256" and check.status is Status.ERROR
    assert "does not match" in panel.job.status.text()


@pytest.mark.slow  # an 80 MB model written and checked, 1.5 s
def test_sha256_cancel_keeps_the_report(qtbot, window, make_model):
    # big enough that hashing takes a moment: 2 x 40 MB of f32 embeddings
    model = make_model("big.gguf", n_layers=1, n_embd=1024, n_ff=256, n_extra_tokens=10000)
    open_and_wait(qtbot, window, model)
    panel = window.model.hash_row
    before = list(window.model.report.checks)
    qtbot.mouseClick(panel.button, Qt.MouseButton.LeftButton)
    assert panel.job.cancel_button.isVisible()
    qtbot.mouseClick(panel.job.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.task is None, timeout=LONG)
    assert panel.job.state is JobState.CANCELLED and panel.checked is None
    assert panel.job.status.text() == "Hash check cancelled."
    assert window.model.report.checks == before  # no "cancelled" row added to the model's checks
    assert not panel.job.cancel_button.isVisible() and panel.button.isEnabled()
