"""The measured safe settings say when the settings in use are no longer the measured ones (issue 22: "Safe
settings, measured: 4096" stayed after a crash's fix restarted the server at 2048)."""

from __future__ import annotations

import time
from types import SimpleNamespace

from app.core.launch.config import LaunchConfig
from app.core.probe import ProbeResult, Recommendation
from tests.ui.steps.settings.probe_session import probe_box, set_config


def test_a_measurement_the_settings_moved_away_from_says_it_is_superseded(qtbot):
    measured = ProbeResult(Recommendation(gpu_layers=0, ctx=4096), [], None)
    measured.saved_at = time.mktime((2026, 3, 4, 10, 30, 0, 0, 0, -1))
    box = probe_box(qtbot, SimpleNamespace(context_length=8192), LaunchConfig(model="m.gguf", ctx=4096), measured)
    assert box.status.text() == "Last measured on 2026-03-04 10:30 (cached): 0 GPU layers, 4096 tokens."

    set_config(box, LaunchConfig(model="m.gguf", ctx=2048))  # a crash's fix halved the context
    assert box.status.text() == ("Last measured on 2026-03-04 10:30 (cached): 0 GPU layers, 4096 tokens. "
                                 "Superseded: the settings changed after this test (context size 4096 → 2048).")

    set_config(box, LaunchConfig(model="m.gguf", ctx=4096))  # back to what was measured: no longer superseded
    assert "Superseded" not in box.status.text()


def test_a_fresh_measurement_says_applied_until_a_fix_changes_the_settings(qtbot):
    measured = ProbeResult(Recommendation(gpu_layers=0, ctx=4096), [], None)
    box = probe_box(qtbot, SimpleNamespace(context_length=8192), LaunchConfig(model="m.gguf", ctx=4096))
    box._on_done(measured)  # as a finished probe reports it (the Settings step applies it: ctx 4096 already)
    assert box.status.text().startswith("Safe settings, measured: ") and box.status.text().endswith(" Applied.")
    set_config(box, LaunchConfig(model="m.gguf", ctx=2048))
    assert box.status.text().endswith(" Superseded: the settings changed after this test (context size 4096 → 2048).")
    assert "Applied." not in box.status.text()
