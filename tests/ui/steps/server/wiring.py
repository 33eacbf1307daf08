"""The Server step wired as the window wires it: ``ServerPanel(bridge)`` whose requests a ``ServerControl`` runs
(``control.attach(panel)``), with the model session's config as the one Start and Restart hand the supervisor."""

from __future__ import annotations

from app.core.launch.config import LaunchConfig
from app.core.session import ModelSession
from app.ui.steps.server.server_control import ServerControl
from app.ui.steps.server.server_panel import ServerPanel
from app.ui.steps.server.supervisor_bridge import SupervisorBridge


class SessionSettings:
    """The Settings step's part the control uses: the session whose config it shows, and an applied change written
    back to that config (what ``SettingsPanel.apply_changes`` does)."""

    def __init__(self, config: LaunchConfig | None) -> None:
        self.session = ModelSession()
        self.session.set_config(config)

    def config(self) -> LaunchConfig | None:
        return self.session.config

    def apply_changes(self, changes) -> None:
        assert self.session.config is not None
        self.session.set_config(self.session.config.with_changes(**changes))


def wired_panel(bridge: SupervisorBridge, *, with_settings: bool = True) -> tuple[ServerPanel, ServerControl]:
    """``with_settings``: the session holds the supervisor's config (a model in the Settings step); without it a
    fix is applied by the supervisor itself, and Start is refused."""
    supervisor = bridge.supervisor
    config = supervisor.config if with_settings and supervisor is not None else None
    panel = ServerPanel(bridge)
    control = ServerControl(bridge, SessionSettings(config), panel)
    control.attach(panel)
    return panel, control
