"""A probe box over its own model session, as the Settings step gives it the window's: the box reads the model,
the config and the remembered result from the session."""

from __future__ import annotations

from app.core.launch.config import LaunchConfig
from app.core.session import CheckedModel, ModelSession
from app.ui.steps.settings.probe_box import ProbeBox


def open_model(session: ModelSession, info, config: LaunchConfig | None = None, saved=None) -> ModelSession:
    """``info`` opened and checked in ``session``, with ``config`` and the profile's ``saved`` probe result."""
    path = str(getattr(info, "path", None) or (config.model if config is not None else "m.gguf"))
    session.open(path)
    session.set_checked(CheckedModel(path, info, []))
    session.set_config(config)
    session.saved_probe = saved
    return session


def probe_box(qtbot, info, config: LaunchConfig | None = None, saved=None) -> ProbeBox:
    box = ProbeBox(session=open_model(ModelSession(), info, config, saved))
    qtbot.addWidget(box)
    box.show_model()
    return box


def set_config(box: ProbeBox, config: LaunchConfig) -> None:
    """An edit in the Settings step: the session's config changes, the box is told."""
    box.session.set_config(config)
    box.show_config()
