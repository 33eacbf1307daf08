"""A model's remembered probe result comes back as a ProbeResult and the box says when it was measured."""

from __future__ import annotations

import time
from types import SimpleNamespace

from app.core.probe import ProbeResult, Recommendation
from app.core.session import CheckedModel, ModelSession
from app.ui.steps.settings.probe_box import ProbeBox


def test_a_stored_result_is_shown_with_the_time_the_cache_saved_it(qtbot, tmp_path):
    measured = ProbeResult(Recommendation(gpu_layers=12, ctx=3072), [], None)
    measured.saved_at = time.mktime((2026, 3, 4, 10, 30, 0, 0, 0, -1))
    stored = measured.to_dict("en")  # what the window keeps in the model's profile

    session = ModelSession()
    session.open(str(tmp_path / "m.gguf"))
    info = SimpleNamespace(context_length=8192)
    session.set_checked(CheckedModel(str(tmp_path / "m.gguf"), info, []))
    session.use_profile({"ctx": 3072, "gpu_layers": 12}, stored)  # the settings it measured: not superseded
    assert isinstance(session.saved_probe, ProbeResult)
    assert session.saved_probe.recommendation == Recommendation(12, 3072)

    box = ProbeBox(session=session)
    qtbot.addWidget(box)
    box.show_model()
    assert box.status.text() == "Last measured on 2026-03-04 10:30 (cached): 12 GPU layers, 3072 tokens."
    session.saved_probe = None  # a profile without a result
    box.show_model()
    assert box.status.text().startswith("Not measured yet.")
