"""A vision projector next to the model: the Model step names it in a check row, and the Settings step's config
carries it, so llama-server is started with the model's image part (issue 12, vision)."""

from __future__ import annotations

from app.core.gguf import read_model_info
from app.core.synthetic.projector import write_projector
from app.core.synthetic.tiny_llama import write_tiny_llama
from tests.ui.conftest import open_and_wait, wait_for_plan


def test_a_projector_beside_the_model_is_found_shown_and_used(qtbot, window, tmp_path):
    model = write_tiny_llama(tmp_path / "vision-model.gguf")
    projector = write_projector(tmp_path / "mmproj-vision-model-f16.gguf", read_model_info(model).embedding_length)
    report = open_and_wait(qtbot, window, model)
    row = next(c for c in report.checks if c.id == "projector")
    assert projector.name in row.message.render("en") and report.projector == str(projector)
    assert "llama-server loads it with the model" in row.message.render("en")  # the default engine
    wait_for_plan(qtbot, window)
    assert window.settings_panel.config().mmproj == str(projector)


def test_no_projector_no_row(qtbot, window, tiny_model):
    report = open_and_wait(qtbot, window, tiny_model)
    assert report.projector is None and not any(c.id == "projector" for c in report.checks)
    wait_for_plan(qtbot, window)
    assert window.settings_panel.config().mmproj is None
