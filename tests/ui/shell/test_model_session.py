"""The window's steps share one ModelSession: opening another model forgets the last one's plan, engine and probe."""

from __future__ import annotations

from types import SimpleNamespace

from tests.ui.conftest import open_and_wait, wait_for_plan


def test_the_steps_share_one_session_and_a_new_model_resets_it(qtbot, window, tiny_model, make_model):
    session = window.session
    assert window.model.session is session and window.settings_panel.session is session
    assert window.profiles.session is session

    open_and_wait(qtbot, window, tiny_model)
    plan = wait_for_plan(qtbot, window)
    assert session.path == str(tiny_model) and session.usable and session.plan is plan
    assert session.config == window.settings_panel.config() and session.plan_config == session.config
    assert session.backend is not None and session.backend.kind == session.config.backend  # resolved once, kept
    session.set_probe(SimpleNamespace(recommendation=None))  # as if "Find safe settings" had run

    window.settings_panel.ctx.setValue(1024)  # an edit updates the session's config
    assert session.config.ctx == 1024

    other = make_model("other.gguf", n_layers=3)
    window.model.open_model(str(other))
    assert session.path == str(other)  # at once: nothing of the last model answers for this one
    assert (session.checked, session.config, session.plan, session.backend, session.probe) == (None,) * 5
    assert window.settings_panel.config() is None
    open_and_wait(qtbot, window, other)
    wait_for_plan(qtbot, window)
    assert session.config.model == str(other) and session.plan_config.model == str(other)


def test_a_model_that_fails_its_checks_leaves_no_settings(qtbot, window, tmp_path):
    bad = tmp_path / "not-a-model.gguf"
    bad.write_bytes(b"hello, not a gguf file" * 10)
    report = open_and_wait(qtbot, window, bad)
    assert not report.usable and window.session.config is None
    assert window.settings_panel.config() is None and not window.settings_panel.isEnabled()
