"""A vision projector next to the model: the Model step names it in a check row, and the Settings step's config
carries it, so llama-server is started with the model's image part (issue 12, vision)."""

from __future__ import annotations

import pytest

from app.core.gguf.reader import read_model_info
from app.core.launch.config import BACKEND_EMBEDDED, BACKEND_LLAMA_SERVER
from app.core.session import ModelSession
from app.core.settings import load_settings
from app.core.synthetic.projector import write_projector
from app.core.synthetic.tiny_llama import write_tiny_llama
from app.ui.steps.model.model_panel import ModelPanel
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


@pytest.mark.parametrize(("saved", "live", "says"), [
    (BACKEND_LLAMA_SERVER, BACKEND_EMBEDDED, "The built-in engine runs the model without its image part"),
    (BACKEND_EMBEDDED, BACKEND_LLAMA_SERVER, "llama-server loads it with the model"),
])
def test_the_projector_is_judged_for_the_live_engine_not_the_saved_one(qtbot, tmp_path, saved, live, says):
    """The user just changed the engine: the window's settings have it, the file on disk gets it a moment later. A
    model opened meanwhile has its projector judged for the engine it will run with (it read the file before)."""
    on_disk = load_settings()
    on_disk.set_engine(saved, None)
    on_disk.save()
    settings = load_settings()
    settings.set_engine(live, None)  # not saved yet
    model = write_tiny_llama(tmp_path / "vision-model.gguf")
    write_projector(tmp_path / "mmproj-vision-model-f16.gguf", read_model_info(model).embedding_length)
    panel = ModelPanel(session=ModelSession(engine_for=settings.engine_for))
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.modelChecked, timeout=30_000) as checked:
        panel.open_model(str(model))
    row = next(c for c in checked.args[0].checks if c.id == "projector")
    assert says in row.message.render("en")


def test_the_window_judges_the_projector_for_its_live_engine_and_so_does_the_hash(qtbot, window, tmp_path):
    """The window's session asks the window's settings (not the file, saved a moment later); hashing the file checks
    it again, for the same engine."""
    window.store.settings.set_engine(BACKEND_EMBEDDED, None)  # chosen a moment ago: not on disk yet
    model = write_tiny_llama(tmp_path / "vision-model.gguf")
    write_projector(tmp_path / "mmproj-vision-model-f16.gguf", read_model_info(model).embedding_length)
    report = open_and_wait(qtbot, window, model)
    says = "The built-in engine runs the model without its image part"
    assert says in next(c for c in report.checks if c.id == "projector").message.render("en")
    with qtbot.waitSignal(window.model.hash_row.hashed, timeout=30_000) as hashed:
        window.model.hash_row.start()
    assert says in next(c for c in hashed.args[0].checks if c.id == "projector").message.render("en")
