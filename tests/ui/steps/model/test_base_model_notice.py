"""A base model (no chat template) is named in the Model step: a warning row with its next step, not "All checks
passed", and the settings and Start stay open (it loads and continues text)."""

from __future__ import annotations

from app.core.problem import Status
from tests.ui.conftest import open_and_wait, statuses


def test_base_model_gets_a_warning_row_and_can_still_be_started(qtbot, window, make_model):
    report = open_and_wait(qtbot, window, make_model("base.gguf", chat_template=False))
    assert statuses(report)["chat_template"] is Status.WARNING
    rows = {label.objectName(): (icon, label) for icon, label, _button in window.model.checks.rows}
    icon, label = rows["check-chat_template"]
    assert icon.status == "warning" and label.isVisible()
    assert "This is a base model: it continues text instead of answering." in label.text()
    assert "pick an instruct/chat version" in label.text()
    assert "All" not in window.model.checks.summary.text()
    assert window.settings_panel.isEnabled()


def test_chat_model_passes_the_template_check(qtbot, window, tiny_model):
    report = open_and_wait(qtbot, window, tiny_model)
    assert statuses(report)["chat_template"] is Status.OK
