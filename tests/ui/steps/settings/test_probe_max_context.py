""""As much context as fits": the probe box offers it when the model was trained for more than the asked context."""

from __future__ import annotations

from app.core.launch.config import LaunchConfig
from app.core.probe import ProbeResult, Recommendation
from app.ui.steps.settings import probe_box as probe_module
from tests.ui.steps.settings.probe_session import open_model, probe_box, set_config
from tests.unit.core.plan.test_plan import make_info


def test_the_box_asks_the_probe_for_the_most_context_when_ticked(qtbot, monkeypatch):
    seen = []

    def fake_probe(info, config, hardware, progress, cancel, max_context=False):
        seen.append(max_context)
        return ProbeResult(Recommendation(gpu_layers=0, ctx=19968 if max_context else 4096), [], None)

    monkeypatch.setattr(probe_module, "probe_call", fake_probe)
    info = make_info(ctx_train=32768)
    box = probe_box(qtbot, info, LaunchConfig(model=info.path, ctx=4096))
    assert box.max_context.isVisibleTo(box) and "32768" in box.max_context.text()
    assert not box.max_context.isChecked()  # the asked context stays the default question
    with qtbot.waitSignal(box.applyRequested) as applied:
        box.run()
    assert seen == [False] and applied.args[0]["ctx"] == 4096
    box.max_context.setChecked(True)
    with qtbot.waitSignal(box.applyRequested) as applied:
        box.run()
    assert seen == [False, True] and applied.args[0]["ctx"] == 19968
    set_config(box, LaunchConfig(model=info.path, ctx=32768))  # already asking for all of it: nothing to offer
    assert not box.max_context.isVisibleTo(box)


def test_the_tick_belongs_to_one_model(qtbot):
    """Ticked for one model, it is not carried over to the next one opened; the same model checked again keeps it."""
    first = make_info(ctx_train=32768, path="/models/first.gguf")
    box = probe_box(qtbot, first, LaunchConfig(model=first.path, ctx=4096))
    box.max_context.setChecked(True)
    open_model(box.session, first, LaunchConfig(model=first.path, ctx=4096))  # opened again: the same model
    box.show_model()
    assert box.max_context.isChecked()
    second = make_info(ctx_train=32768, path="/models/second.gguf")
    open_model(box.session, second, LaunchConfig(model=second.path, ctx=4096))
    box.show_model()
    assert box.max_context.isVisibleTo(box) and not box.max_context.isChecked()
